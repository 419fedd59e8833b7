// `npm run build`, after tsc: what the build derives from the compiled schema definitions.
// dist/validators/: every schema a run validates with, compiled ahead of time (see
// src/schema/precompile.ts and precompiled.ts).
import { join } from 'node:path';
import { schemasToPrecompile } from '../dist/playbook/published-schemas.js';
import { precompileInto } from '../dist/schema/precompile.js';

const root = join(import.meta.dirname, '..');
const validators = join(root, 'dist', 'validators');
const n = precompileInto(validators, schemasToPrecompile());
process.stdout.write(`precompiled ${n} validators into ${validators}\n`);
