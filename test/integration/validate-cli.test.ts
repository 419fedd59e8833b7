// `tsbm validate` end to end through the built CLI: a playbook whose variables come from every
// place validate must know passes; several errors are all reported; JSON output for CI.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const FIX = 'test/fixtures/playbooks';
const VALID = `${FIX}/valid/site.yml`;
const INV = `${FIX}/valid/inventory.yml`;

async function tsbm(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run('node', ['bin/tsbm.js', ...args], { cwd: ROOT, timeout: 90_000 });
    return { code: 0, ...r };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof err.code === 'number' ? err.code : -1,
      stdout: err.stdout ?? '',
      stderr: err.stderr ?? '',
    };
  }
}

beforeAll(() => {
  // npm test builds first; compiling here would swap dist/ under other test files.
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js'))) throw new Error('run `npm run build` first');
});

describe.concurrent('tsbm validate', { timeout: 120_000 }, () => {
  it('passes a playbook using inventory, group_vars, magic, play, vars_files, role, registered, set_fact, loop and extra vars', async () => {
    const r = await tsbm('validate', VALID, '-i', INV, '-e', 'image=oci://r/os:1');
    expect(r.stdout).toBe('');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('ok');
  });

  it('without the extra var, names it for every host', async () => {
    const r = await tsbm('validate', VALID, '-i', INV);
    expect(r.code).toBe(4);
    expect(r.stdout.trim().split('\n')).toEqual([
      `${VALID}:12:14: undefined variable "image" in task "Inventory, group_vars, magic, play, vars_files and extra vars" for hosts node1, node2 (define "image" in the inventory, the play's vars or with -e, or use "default image ...")`,
    ]);
  });

  it('without -i checks everything but variables', async () => {
    const r = await tsbm('validate', VALID);
    expect(r.code).toBe(0);
  });

  it('reports every error, in order, as JSON with --output json', async () => {
    const r = await tsbm('validate', `${FIX}/several-errors.yml`, '-i', INV, '--output', 'json');
    expect(r.code).toBe(4);
    const out = JSON.parse(r.stdout) as {
      ok: boolean;
      errors: Array<{ file: string; line: number; col: number; message: string; hint: string | null }>;
    };
    expect(out.ok).toBe(false);
    expect(out.errors.map((e) => `${e.line}:${e.col} ${e.message}`)).toEqual([
      '4:21 undefined variable "nope" in task "First" for hosts node1, node2',
      '6:7 unknown module "debgu" in task "Second" (did you mean "debug"?)',
      '8:20 file not found: "missing.txt" (src of copy in task "Third")',
      '10:21 template syntax error: unexpected character on line 1',
    ]);
    expect(out.errors[0]!.file).toBe(`${FIX}/several-errors.yml`);
    expect(out.errors[0]!.hint).toMatch(/default nope/);
    expect((out.errors[0] as { hosts?: string[] }).hosts).toEqual(['node1', 'node2']);
    expect('hosts' in out.errors[1]!).toBe(false);
  });

  it('validates several playbooks at once and prints ok JSON', async () => {
    const r = await tsbm('validate', VALID, `${FIX}/full/site.yml`, '--output', 'json');
    expect(JSON.parse(r.stdout)).toEqual({ ok: true, errors: [] });
    expect(r.code).toBe(0);
  });

  it('a missing playbook file is a positioned-less parse error, not a crash', async () => {
    const r = await tsbm('validate', `${FIX}/does-not-exist.yml`);
    expect(r.code).toBe(4);
    expect(r.stdout).toContain('cannot read test/fixtures/playbooks/does-not-exist.yml: file not found');
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });

  it('a bad inventory is reported and exits 4', async () => {
    const r = await tsbm('validate', VALID, '-i', `${FIX}/no-such-inventory.yml`);
    expect(r.code).toBe(4);
    expect(r.stdout).toContain('no-such-inventory.yml');
  });
});

describe('tsbm validate on the shipped examples', { timeout: 120_000 }, () => {
  // deploy-ramdisk.yml boots instance_info.boot_iso, which no example inventory gives (they
  // are for deploy-bootc.yml): validate names it, to the last key, for every host.
  const RAMDISK_ERROR =
    'playbooks/roles/boot-instance-iso/tasks/main.yml:5:12: undefined variable "instance_info.boot_iso" (read through "instance_iso") in task "Insert the instance ISO" for hosts node1, node2, node01 and 2 more';

  it('playbooks/*.yml with every inventory example: only deploy-ramdisk.yml lacks a variable', async () => {
    const { readdirSync } = await import('node:fs');
    const pbs = readdirSync(join(ROOT, 'playbooks'))
      .filter((f) => f.endsWith('.yml'))
      .map((f) => `playbooks/${f}`);
    const invs = readdirSync(join(ROOT, 'inventory-examples'))
      .filter((f) => f.endsWith('.yml'))
      .flatMap((f) => ['-i', `inventory-examples/${f}`]);
    const r = await tsbm('validate', ...pbs.filter((p) => !p.endsWith('deploy-ramdisk.yml')), ...invs);
    expect(r.stdout).toBe('');
    expect(r.code).toBe(0);
    const ramdisk = await tsbm('validate', ...pbs, ...invs);
    expect(ramdisk.stdout.trim().split('\n').map((l) => l.replace(/ \(give .*\)$/, ''))).toEqual([RAMDISK_ERROR]);
    expect(ramdisk.code).toBe(4);
  });

  it('deploy-ramdisk.yml passes once the ISO is given', async () => {
    const r = await tsbm(
      'validate',
      'playbooks/deploy-ramdisk.yml',
      '-i',
      'inventory-examples/sim.yml',
      '-e',
      'instance_iso=http://127.0.0.1:9/instance.iso',
    );
    expect(r.stdout).toBe('');
    expect(r.code).toBe(0);
  });
});
