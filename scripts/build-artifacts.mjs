// `npm run build`, after tsc: what the build derives from the compiled definitions.
// - dist/validators/: every schema a run validates with, compiled ahead of time (see
//   src/schema/precompile.ts and precompiled.ts), so a run does not compile them at start-up.
// - schemas/: the JSON Schemas for editors (playbook, inventory, events, one per module),
//   shipped in the package (package.json "files"); not committed: they come from the module
//   files and playbook/schema.ts on every build.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { schemasToPrecompile, writeSchemas } from '../dist/playbook/published-schemas.js';
import { precompileInto } from '../dist/schema/precompile.js';

const root = join(import.meta.dirname, '..');
const validators = join(root, 'dist', 'validators');
const n = precompileInto(validators, schemasToPrecompile());
const schemas = join(root, 'schemas');
rmSync(schemas, { recursive: true, force: true });
const written = writeSchemas(schemas);
process.stdout.write(`precompiled ${n} validators into ${validators}; wrote ${written.length} schemas to ${schemas}\n`);
