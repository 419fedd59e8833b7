// Adding a module is one new file plus one line in the module list: in a copy of the project,
// a trivial module is added that way, the copy is built, and the module shows up in
// `tsbm modules`, in its own schema file and in the playbook schema, and runs in a playbook.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const copy = mkdtempSync(join(tmpdir(), 'tsbm-addmod-'));
afterAll(() => rmSync(copy, { recursive: true, force: true }));

const MODULE = `// hello: says hello (a test module).
import { defineModule } from '../../module-api/types.js';
import { Type } from '../../schema/type-builder.js';

export const helloModule = defineModule({
  name: 'hello',
  summary: 'Say hello to someone',
  runsOn: 'controller',
  args: Type.Object({ to: Type.String({ description: 'Who to greet' }) }, { additionalProperties: false }),
  checkMode: true,
  example: '- hello:\\n    to: world',
  async run(_ctx, a) {
    return { changed: false, msg: \`hello \${a.to}\` };
  },
});
`;

function tsbm(args: string[]) {
  return spawnSync(process.execPath, [join(copy, 'bin', 'tsbm.js'), ...args], { cwd: copy, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
}

beforeAll(() => {
  for (const p of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'bin', 'scripts', 'src']) {
    cpSync(join(root, p), join(copy, p), { recursive: true });
  }
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
  // The two changes: the file (in a capability folder of its own), and its line in the list.
  mkdirSync(join(copy, 'src', 'modules', 'greetings'));
  writeFileSync(join(copy, 'src', 'modules', 'greetings', 'hello.ts'), MODULE);
  const list = join(copy, 'src', 'modules', 'registry.ts');
  const text = readFileSync(list, 'utf8');
  writeFileSync(
    list,
    text
      .replace(/^(import \{ \w+ \} from '\.\/\w+\/\w+\.js';\n)/m, "import { helloModule } from './greetings/hello.js';\n$1")
      .replace(/^(const MODULES: readonly ModuleDef\[\] = \[\n)/m, '$1  helloModule,\n'),
  );
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: copy, stdio: 'pipe' });
  execFileSync(process.execPath, ['scripts/build-artifacts.mjs'], { cwd: copy, stdio: 'pipe' });
}, 600_000);

describe('adding a module', () => {
  it('is listed by tsbm modules, with its docs', () => {
    const list = tsbm(['modules']);
    expect(list.status).toBe(0);
    expect(list.stdout).toMatch(/^\s*hello\s.*Say hello to someone/m);
    const one = tsbm(['modules', 'hello']);
    expect(one.stdout).toContain('Who to greet');
  });

  it('gets its schema file and a place in the playbook schema', () => {
    const own = JSON.parse(readFileSync(join(copy, 'schemas', 'modules', 'hello.json'), 'utf8'));
    expect(own.properties.to.description).toBe('Who to greet');
    const playbook = readFileSync(join(copy, 'schemas', 'playbook.json'), 'utf8');
    expect(playbook).toContain('"module_hello"');
  });

  it('runs in a playbook, its arguments validated', () => {
    writeFileSync(join(copy, 'inv.yml'), 'all:\n  hosts:\n    h1:\n      connection: local\n');
    writeFileSync(join(copy, 'ok.yml'), '- hosts: all\n  tasks:\n    - hello:\n        to: world\n');
    writeFileSync(join(copy, 'bad.yml'), '- hosts: all\n  tasks:\n    - hello:\n        too: world\n');
    const ok = tsbm(['run', 'ok.yml', '-i', 'inv.yml', '--no-journal', '-v']);
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toContain('hello world');
    const bad = tsbm(['run', 'bad.yml', '-i', 'inv.yml', '--no-journal']);
    expect(bad.status).toBe(4);
    expect(bad.stdout + bad.stderr).toMatch(/bad\.yml:4:9: missing required/);
  });
});
