// INI inventories mean what they mean to Ansible: `tsbm inventory --list` (and --export) on each
// file of test/fixtures/inventory/ini equals `ansible-inventory --list` on the same file, and
// the value typing equals Python's ast.literal_eval (which Ansible's INI plugin uses).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pythonLiteral } from '../../src/inventory/python-literal.js';
import { runCli } from '../helpers/tsbm-cli.js';
import { scratchDirs } from '../helpers/scratch.js';

const root = resolve(import.meta.dirname, '../..');
const FX = join(root, 'test/fixtures/inventory/ini');
const scratch = scratchDirs();

const probe = spawnSync('ansible-inventory', ['--version'], { encoding: 'utf8' });
const hasAnsible = probe.status === 0;
const python = spawnSync('python3', ['-c', 'import ast'], { encoding: 'utf8' });
const hasPython = python.status === 0;

function ansibleList(file: string, extra: string[], home: string): unknown {
  const cfg = join(home, 'ansible.cfg');
  writeFileSync(cfg, ''); // Ansible's defaults, whatever the machine's /etc/ansible holds
  const r = spawnSync('ansible-inventory', ['-i', file, '--list', ...extra], {
    cwd: home,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: home, LANG: 'C.UTF-8', ANSIBLE_LOCALHOST_WARNING: 'false', ANSIBLE_CONFIG: cfg },
  });
  if (r.status !== 0 || /Unable to parse|Failed to parse/.test(r.stderr)) throw new Error(`ansible-inventory failed on ${file}:\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

const sources = readdirSync(FX).sort();

describe.skipIf(!hasAnsible)('tsbm inventory --list equals ansible-inventory --list on INI inventories', () => {
  it('the fixtures hold an INI file with every section kind, an extensionless list and a directory', () => {
    expect(sources).toEqual(expect.arrayContaining(['docs.ini', 'edge.ini', 'plain-list', 'dir']));
  });

  it.each(sources.flatMap((f) => [[f, '--list'], [f, '--list --export']]))('%s (%s)', (name, mode) => {
    const home = scratch('tsbm-ini-home-');
    const file = join(FX, name);
    const extra = mode.includes('--export') ? ['--export'] : [];
    const t = runCli(['inventory', '-i', file, '--list', ...extra], { cwd: home, home });
    expect(t.code, t.stderr).toBe(0);
    expect(JSON.parse(t.stdout)).toEqual(ansibleList(file, extra, home));
  });
});

describe('INI inventories in tsbm', () => {
  it('a run on an INI inventory sees its typed vars (number, boolean, list) and its groups', () => {
    const dir = scratch('tsbm-ini-run-');
    const inv = join(dir, 'hosts.ini');
    const book = join(dir, 'site.yml');
    writeFileSync(inv, '[lab]\nn[1:2] ansible_connection=local\n\n[lab:vars]\nport=8080\nflag=True\nitems=[1, "a"]\n');
    writeFileSync(
      book,
      '- hosts: lab\n  gather_facts: false\n  tasks:\n    - name: show\n      debug:\n        msg: \'{{ inventory_hostname }} {{ json port }} {{ json flag }} {{ json items }}\'\n',
    );
    const r = runCli(['run', book, '-i', inv, '--output', 'json', '--no-journal'], { cwd: dir, home: dir });
    expect(r.code, r.all).toBe(0);
    const msgs = r.stdout
      .split('\n')
      .filter((l) => l.includes('"host_result"'))
      .map((l) => (JSON.parse(l) as { host: string; result: { msg: string } }).result.msg)
      .sort();
    expect(msgs).toEqual(['n1 8080 true [1,"a"]', 'n2 8080 true [1,"a"]']);
  });

  it('a mistake is a parse error at file:line with what to do, exit 4', () => {
    const dir = scratch('tsbm-ini-bad-');
    const inv = join(dir, 'hosts.ini');
    writeFileSync(inv, '[rack1]\nnode1\n\n[site:children]\nrack1\nrack2\n');
    const r = runCli(['inventory', '-i', inv, '--list'], { cwd: dir, home: dir });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`${inv}:6:1: section [site:children] names group "rack2", which this inventory never declares`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

// Inputs Ansible's INI plugin hands to ast.literal_eval; tsbm must type each one as Python does.
const LITERALS = [
  '1', '-3', '+3', '- 3', '00', '010', '0_0', '1_000', '1__0', '0x1f', '-0x10', '0o17', '0b101', '0x_1',
  '1.5', '1.', '.5', '1e3', '1E-2', '07.5', '1.2.3', '10.0.0.5', '1j', '--1',
  'True', 'False', 'None', 'true', 'none', 'yes',
  "'x y'", '"a"', '"a" \'b\'', "r'a\\nb'", 'u"x"', '"a\\tb"', '"\\x41\\u00e9"', '"\\q"', '"unterminated',
  '[1, 2]', '[1,]', '[]', "[1, 'a', [None]]", '(1, 2)', '(1,)', '()', '(1)', "{'k': 'v'}", '{"a": 1,}', '{}', "{'a': [1, {'b': None}], 'c': True}",
  '1 # comment', 'hello world', 'hello', '{{ x }}', '/path/to', 'a=b', ' 1', '1 if 1 else 2', 'x.y', '"a" + "b"',
];

describe.skipIf(!hasPython)('INI value typing equals Python ast.literal_eval', () => {
  it('every case', () => {
    const script = `
import ast, json, sys
out = []
for v in json.load(sys.stdin):
    try:
        r = ast.literal_eval(v)
        out.append({"value": list(r) if isinstance(r, tuple) else r} if not isinstance(r, (complex, bytes, set)) else None)
    except (ValueError, SyntaxError):
        out.append(None)
print(json.dumps(out))`;
    const r = spawnSync('python3', ['-c', script], { input: JSON.stringify(LITERALS), encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const python = JSON.parse(r.stdout) as Array<{ value: unknown } | null>;
    const ours = LITERALS.map((v) => pythonLiteral(v) ?? null);
    expect(Object.fromEntries(LITERALS.map((v, i) => [v, ours[i]]))).toEqual(Object.fromEntries(LITERALS.map((v, i) => [v, python[i]])));
  });
});

if (!hasAnsible) it.skip('INI inventories vs ansible-inventory: SKIPPED because ansible-inventory is not installed (.ci/setup.sh installs ansible-core)', () => {});
if (!existsSync(join(root, 'dist/cli/main.js'))) throw new Error('run `npm run build` first');
