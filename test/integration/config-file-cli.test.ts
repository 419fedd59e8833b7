// The project config file through the built CLI: `tsbm run`, `tsbm validate`, `tsbm inventory`
// and `tsbm runs` read tsbm.cfg (found in the working directory, or named by TSBM_CONFIG) and
// TSBM_* variables; a flag on the command line wins over both.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { scratchDirs } from '../helpers/scratch.js';
import { runCli } from '../helpers/tsbm-cli.js';

const root = resolve(import.meta.dirname, '../..');
const scratch = scratchDirs();
let dir: string;
let home: string;

const tsbm = (args: string[], env: NodeJS.ProcessEnv = {}, cwd = dir) => runCli(args, { cwd, home, env });

function runStart(stdout: string): { options: { forks: number; inventories: string[] } } {
  const line = stdout.split('\n').find((l) => l.includes('"type":"run_start"'));
  if (!line) throw new Error(`no run_start in:\n${stdout}`);
  return JSON.parse(line);
}

beforeAll(() => {
  if (!existsSync(join(root, 'dist/executor/run.js'))) throw new Error('run `npm run build` first');
  const base = scratch('tsbm-cfgcli-');
  dir = join(base, 'project');
  home = join(base, 'home');
  mkdirSync(join(dir, 'inventories'), { recursive: true, mode: 0o755 });
  mkdirSync(home);
  writeFileSync(join(dir, 'inventories', 'lab.yml'), 'all:\n  hosts:\n    from_config:\n      connection: local\n');
  writeFileSync(join(dir, 'other.yml'), 'all:\n  hosts:\n    from_env:\n      connection: local\n');
  writeFileSync(join(dir, 'flag.yml'), 'all:\n  hosts:\n    from_flag:\n      connection: local\n');
  writeFileSync(
    join(dir, 'site.yml'),
    '- name: Demo\n  hosts: all\n  gather_facts: false\n  tasks:\n    - name: Say hi\n      debug:\n        msg: "hello {{ inventory_hostname }}"\n',
  );
  writeFileSync(join(dir, 'tsbm.cfg'), '[defaults]\ninventory = inventories/lab.yml\nforks = 7\njournal_dir = journals\n');
});

// Each test runs the CLI a few times: generous bounds, the CI machine is loaded (no timing is tested).
describe('tsbm.cfg in the working directory', { timeout: 300_000 }, () => {
  it('tsbm run takes its inventory, forks and journal_dir', () => {
    const r = tsbm(['run', 'site.yml', '--output', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const start = runStart(r.stdout);
    expect(start.options.forks).toBe(7);
    expect(start.options.inventories).toEqual([join(dir, 'inventories/lab.yml')]);
    expect(r.stdout).toContain('hello from_config');
    expect(readdirSync(join(dir, 'journals')).some((f) => f.endsWith('.jsonl'))).toBe(true);
    const list = tsbm(['runs', 'list', '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toHaveLength(1);
  });

  it('TSBM_INVENTORY and TSBM_FORKS win over the file; -i and -f win over both', () => {
    const env = tsbm(['run', 'site.yml', '--output', 'json', '--no-journal'], { TSBM_INVENTORY: 'other.yml', TSBM_FORKS: '2' });
    expect(env.code, env.stderr).toBe(0);
    expect(runStart(env.stdout).options).toMatchObject({ forks: 2, inventories: [join(dir, 'other.yml')] });
    expect(env.stdout).toContain('hello from_env');
    const flag = tsbm(['run', 'site.yml', '--output', 'json', '--no-journal', '-i', 'flag.yml', '-f', '4'], { TSBM_INVENTORY: 'other.yml' });
    expect(flag.code, flag.stderr).toBe(0);
    expect(runStart(flag.stdout).options).toMatchObject({ forks: 4, inventories: ['flag.yml'] });
    expect(flag.stdout).toContain('hello from_flag');
  });

  it('tsbm inventory and tsbm validate use the configured inventory', () => {
    const inv = tsbm(['inventory', '--list']);
    expect(inv.code, inv.stderr).toBe(0);
    expect(Object.keys(JSON.parse(inv.stdout)._meta.hostvars)).toEqual(['from_config']);
    const v = tsbm(['validate', 'site.yml']);
    expect(v.code, v.stderr).toBe(0);
  });

  it('tsbm config shows each value and where it came from', () => {
    const r = tsbm(['config', '--json'], { TSBM_FORKS: '9' });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { file: string; settings: Array<{ name: string; value: unknown; source: string }> };
    expect(out.file).toBe(join(dir, 'tsbm.cfg'));
    const by = Object.fromEntries(out.settings.map((s) => [s.name, s]));
    expect(by.forks).toMatchObject({ value: 9, source: 'environment TSBM_FORKS' });
    expect(by.inventory).toMatchObject({ value: [join(dir, 'inventories/lab.yml')], source: `${join(dir, 'tsbm.cfg')}:2` });
  });

  it('a mistake in the file stops every command that reads it with exit 5, naming file:line', () => {
    const bad = scratch('tsbm-cfgbad-');
    writeFileSync(join(bad, 'tsbm.cfg'), '[defaults]\nfroks = 3\n');
    const r = tsbm(['run', join(dir, 'site.yml'), '-i', join(dir, 'flag.yml')], {}, bad);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain(`${join(bad, 'tsbm.cfg')}:2:1: unknown setting "froks" in [defaults] (did you mean "forks"?)`);
    // TSBM_CONFIG names another file: the bad one is not read
    writeFileSync(join(bad, 'good.cfg'), '[defaults]\nforks = 3\n');
    const named = tsbm(['config', '--json'], { TSBM_CONFIG: 'good.cfg' }, bad);
    expect(named.code, named.stderr).toBe(0);
    expect(JSON.parse(named.stdout).file).toBe(join(bad, 'good.cfg'));
  });
});
