// A --limit that matches no host is an error (exit 1, one line, nothing run), as ansible-playbook
// ("no hosts matched"): a CI job that deployed nothing must not go green. The journal still
// records how the run ended.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJournal } from '../../src/journal/reader.js';
import { runTsbm } from '../helpers/fault-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-nomatch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'inv.yml'), 'all:\n  hosts:\n    node01:\n      connection: local\n');
writeFileSync(join(dir, 'site.yml'), `- hosts: all\n  gather_facts: false\n  tasks:\n    - name: Touch\n      command: touch ${dir}/touched\n`);

describe('--limit matching no host', () => {
  it('exits 1 with one line, runs nothing, and the journal says so', async () => {
    const r = await runTsbm(['run', 'site.yml', '-i', 'inv.yml', '-l', 'node1', '--output', 'plain'], { cwd: dir, env: process.env });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^tsbm: error: --limit "node1" matches no host in the inventory/)]);
    expect(r.stdout).not.toContain('TASK');
    expect(readdirSync(dir)).not.toContain('touched');
    const [journal] = readdirSync(join(dir, '.tsbm', 'runs'));
    expect(readJournal(join(dir, '.tsbm', 'runs', journal!)).records.at(-1)).toMatchObject({ type: 'run_end', exitCode: 1 });
  });

  it('an empty --limit (-l "$NODES" with NODES unset) is the same error, not every host', async () => {
    for (const limit of ['', ' ']) {
      const r = await runTsbm(['run', 'site.yml', '-i', 'inv.yml', '-l', limit, '--output', 'plain'], { cwd: dir, env: process.env });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^tsbm: error: --limit is empty, so it matches no host/)]);
      expect(r.stdout).not.toContain('TASK');
      expect(readdirSync(dir)).not.toContain('touched');
    }
  });

  it('a limit that matches is fine', async () => {
    const r = await runTsbm(['run', 'site.yml', '-i', 'inv.yml', '-l', 'node0*', '--output', 'plain'], { cwd: dir, env: process.env });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(dir)).toContain('touched');
  });
});
