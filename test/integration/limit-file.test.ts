// `--limit @file` picks the hosts a run may touch, so it must be the file the operator named and
// as it was when the run started. Two bugs, each reproduced with local hosts that touch a file:
// - the file was read from the playbook's directory, not the current one: a `lim.txt` beside the
//   playbook naming more hosts was used instead of the operator's;
// - `--resume` read the file again, so one edited after the run (a host added) widened the
//   resumed run to hosts the run never targeted.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliRun, runTsbm, stateArgs } from '../helpers/fault-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-limit-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const here = join(dir, 'work');
mkdirSync(here);
const state = stateArgs(dir);
writeFileSync(join(dir, 'inv.yml'), 'all:\n  hosts:\n    a: {connection: local}\n    b: {connection: local}\n');
// Task 2 fails until the `go` file exists, so the run can be resumed.
writeFileSync(
  join(dir, 'site.yml'),
  `- hosts: all
  gather_facts: false
  tasks:
    - name: Touch
      command: touch ${dir}/touched-{{ inventory_hostname }}
    - name: Gate
      command: test -e ${dir}/go
`,
);
const touched = (h: string) => existsSync(join(dir, `touched-${h}`));
const tsbm = (args: string[]): Promise<CliRun> =>
  runTsbm(['run', join(dir, 'site.yml'), '-i', join(dir, 'inv.yml'), '--output', 'json', ...args, ...state.args], { cwd: here, env: state.env });

describe('--limit @file', () => {
  it('is read from the current directory, not from beside the playbook', async () => {
    writeFileSync(join(dir, 'lim.txt'), 'a\nb\n'); // beside the playbook: must not be used
    writeFileSync(join(here, 'lim.txt'), 'a\n');
    const r = await tsbm(['-l', '@lim.txt']);
    expect(r.code, r.stderr).toBe(2); // the gate fails on a
    expect(touched('a')).toBe(true);
    expect(touched('b')).toBe(false);
  });

  it('edited after the run, refuses the resume instead of widening it', async () => {
    writeFileSync(join(here, 'lim.txt'), 'a\nb\n');
    writeFileSync(join(dir, 'go'), '');
    const r = await tsbm(['--resume', 'last']);
    expect(r.code, r.stderr).toBe(5);
    expect(r.stderr).toMatch(/--limit @file\) changed since it ran/);
    expect(touched('b')).toBe(false);
    // Put back as it was, the same run resumes and finishes on a only (a failed at the gate:
    // a resume leaves failed hosts failed unless --retry-failed asks for them again).
    writeFileSync(join(here, 'lim.txt'), 'a\n');
    const ok = await tsbm(['--resume', 'last', '--retry-failed']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(touched('b')).toBe(false);
  });
});
