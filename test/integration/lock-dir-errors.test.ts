// A node lock directory tsbm cannot create (a user whose HOME does not exist, a --lock-dir
// under a file) stops the run before anything starts, with an error that names the lock
// directory and says how to choose another, not "cannot open the run journal ... or run with
// --no-journal", which blamed the journal and suggested a flag that does not help.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTsbm } from '../helpers/fault-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-lockdir-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'inv.yml'), 'all:\n  hosts:\n    node01:\n      connection: local\n');
writeFileSync(join(dir, 'site.yml'), `- hosts: all\n  gather_facts: false\n  tasks:\n    - name: Touch\n      command: touch ${dir}/touched\n`);
writeFileSync(join(dir, 'a-file'), '');

describe('a node lock directory that cannot be created', () => {
  for (const [how, args, env] of [
    ['--lock-dir under a file', ['--lock-dir', join(dir, 'a-file', 'locks')], {}],
    ['TSBM_LOCK_DIR under a file', [], { TSBM_LOCK_DIR: join(dir, 'a-file', 'locks') }],
  ] as const) {
    it(`${how}: one line naming the lock directory, exit 1, nothing run`, async () => {
      const r = await runTsbm(['run', 'site.yml', '-i', 'inv.yml', '--output', 'plain', ...args], { cwd: dir, env: { ...process.env, ...env } });
      expect(r.code, r.stderr).toBe(1);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toEqual([expect.stringMatching(/^tsbm: error: cannot create the node lock directory .*a-file\/locks \(ENOTDIR\)/)]);
      expect(lines[0]).toMatch(/--lock-dir or TSBM_LOCK_DIR/);
      expect(lines[0]).not.toMatch(/run journal|--no-journal/);
      expect(readdirSync(dir)).not.toContain('touched');
    });
  }

  it('an unwritable journal directory is named as such', async () => {
    const r = await runTsbm(['run', 'site.yml', '-i', 'inv.yml', '--output', 'plain', '--journal-dir', join(dir, 'a-file', 'runs'), '--lock-dir', join(dir, 'locks')], {
      cwd: dir,
      env: process.env,
    });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/run journal directory .*a-file\/runs/);
    expect(readdirSync(dir)).not.toContain('touched');
  });
});
