// `npm run build`, after tsc: what the build derives from the compiled definitions.
// - dist/validators/: every schema a run validates with, compiled ahead of time (see
//   src/schema/precompile.ts and precompiled.ts), so a run does not compile them at start-up.
// - schemas/: the JSON Schemas for editors (playbook, inventory, events, one per module),
//   shipped in the package (package.json "files"); not committed: they come from the module
//   files and playbook/schema.ts on every build.
// - dist/modules/registry.js: the module list as one file, for start-up (see module-list.mjs);
//   written last, the steps above use the list as compiled.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { schemasToPrecompile, writeSchemas } from '../dist/playbook/published-schemas.js';
import { precompileInto } from '../dist/schema/precompile.js';
import { writeModuleList } from './module-list.mjs';

const root = join(import.meta.dirname, '..');
const validators = join(root, 'dist', 'validators');
const n = precompileInto(validators, schemasToPrecompile());
const schemas = join(root, 'schemas');
rmSync(schemas, { recursive: true, force: true });
const written = writeSchemas(schemas);
const modules = await writeModuleList(join(root, 'dist'));
process.stdout.write(
  `precompiled ${n} validators into ${validators}; wrote ${written.length} schemas to ${schemas}; ${modules} modules in dist/modules/registry.js\n`,
);
