// The HTML report through the built CLI on controller-local hosts: `tsbm run --report FILE`
// and `tsbm runs report RUN -o FILE` write the same page from the journal, with secrets masked;
// a resumed run's report shows both runs; bad options are one line and exit 5.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MASK } from '../../src/output/redact.js';
import { type CliRun, runTsbm } from '../helpers/fault-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-reportcli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECRET = 'Qw7-report-inventory-pw-3391';
const EXTRA_SECRET = 'Tz5-report-extra-token-8826';
const env = { ...process.env, TSBM_LOCK_DIR: join(dir, 'locks'), NO_COLOR: '1' };
const runs = join(dir, 'runs');
writeFileSync(
  join(dir, 'inv.yml'),
  `all:\n  hosts:\n    alpha:\n      connection: local\n    beta:\n      connection: local\n  vars:\n    db_password: ${SECRET}\n`,
);
writeFileSync(
  join(dir, 'site.yml'),
  `- name: Demo
  hosts: all
  gather_facts: false
  tasks:
    - name: Say hi
      debug:
        msg: "hello {{ inventory_hostname }} {{ db_password }} {{ api_token }}"
    - name: Echo the secret
      command: echo {{ db_password }}
    - name: Need the flag
      command: test -e ${dir}/flag-{{ inventory_hostname }}
`,
);

const tsbm = (args: string[]): Promise<CliRun> => runTsbm(args, { cwd: dir, env, timeoutMs: 60_000 });
const runArgs = ['run', 'site.yml', '-i', 'inv.yml', '-e', `api_token=${EXTRA_SECRET}`, '--journal-dir', runs];

function payload(file: string): { runs: { id: string }[]; strings: string[]; values: string[]; hosts: { n: number; s: number }[]; states: string[] } {
  const html = readFileSync(file, 'utf8');
  return JSON.parse(/<script type="application\/json" id="tsbm-report-data">([^<]*)<\/script>/.exec(html)![1]!);
}

describe('tsbm run --report / tsbm runs report', () => {
  it('--report writes the page at the end of a failed run; no secret in it, the masked message is', async () => {
    writeFileSync(join(dir, 'flag-alpha'), '');
    const out = join(dir, 'run.html');
    const r = await tsbm([...runArgs, '--output', 'plain', '-vvv', '--report', out]);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain(`Report: ${out}`);
    const html = readFileSync(out, 'utf8');
    for (const text of [html, r.stdout, r.stderr]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(EXTRA_SECRET);
      expect(text).not.toContain(Buffer.from(SECRET).toString('base64'));
    }
    const p = payload(out);
    expect(p.strings).toContain(`hello alpha ${MASK} ${MASK}`);
    const state = (name: string) => p.states[p.hosts.find((h) => p.strings[h.n] === name)!.s];
    expect(state('alpha')).toBe('ok');
    expect(state('beta')).toBe('failed');
    // the command's stdout (the secret, masked) is in a result
    expect(p.values.some((v) => v === JSON.stringify(MASK))).toBe(true);
  });

  it('--output json keeps stdout pure JSON Lines (the report line is not printed)', async () => {
    const out = join(dir, 'json.html');
    const r = await tsbm([...runArgs, '--output', 'json', '--report', out]);
    expect(r.code).toBe(2);
    expect(r.stdout.trim().split('\n').every((l) => l.startsWith('{'))).toBe(true);
    expect(existsSync(out)).toBe(true);
  });

  it('runs report RUN -o FILE writes the same data from the journal', async () => {
    const out = join(dir, 'last.html');
    const r = await tsbm(['runs', 'report', 'last', '-o', out, '--journal-dir', runs]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^report of 2 nodes written to .*last\.html \(\d+ KiB\)\n$/);
    const fromRun = payload(join(dir, 'json.html'));
    const fromJournal = payload(out);
    expect(fromJournal.runs).toEqual(fromRun.runs);
    expect(fromJournal.strings).toEqual(fromRun.strings);
    expect(readFileSync(out, 'utf8')).not.toContain(SECRET);
  });

  it('a resumed run reports both runs: the failure, then the task done on resume', async () => {
    writeFileSync(join(dir, 'flag-beta'), '');
    const out = join(dir, 'resumed.html');
    const r = await tsbm([...runArgs, '--output', 'plain', '--resume', 'last', '--retry-failed', '--report', out]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const p = payload(out);
    expect(p.runs).toHaveLength(2);
    const beta = p.hosts.find((h) => p.strings[h.n] === 'beta')!;
    expect(p.states[beta.s]).toBe('ok');
  });

  it.each([
    [['run', 'site.yml', '-i', 'inv.yml', '--no-journal', '--report', 'x.html'], /--report is built from the run journal \(drop --no-journal\)/],
    [['run', 'site.yml', '-i', 'inv.yml', '--report', '/nonexistent-dir/x.html'], /--report \/nonexistent-dir\/x\.html: directory \/nonexistent-dir does not exist/],
    [['runs', 'report', 'last'], /required option '-o, --output <file>' not specified/],
    [['runs', 'report', 'last', '-o', 'x.html', '--journal-dir', join(dir, 'none')], /no runs recorded in/],
  ])('usage error %j: exit 5, one line', async (args, message) => {
    const r = await tsbm(args);
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
