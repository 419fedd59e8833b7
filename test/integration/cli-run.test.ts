// `tsbm run` end to end through the built CLI, on controller-local hosts (connection: local):
// every output mode, JUnit, secrets, exit codes and Ctrl-C.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventSchema } from '../../src/output/event-schema.js';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/tsbm.js');
const dir = mkdtempSync(join(tmpdir(), 'tsbm-clirun-'));
const SECRET = 'Zq9-inventory-pw-7741';
const EXTRA_SECRET = 'Xk3-extra-token-5520';

function tsbm(args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  // npm test builds first (tsc and the build's artifacts); compiling here again while other
  // test files run the built CLI would swap dist/ under them.
  if (!existsSync(join(root, 'dist/executor/run.js'))) throw new Error('run `npm run build` first');
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
    - name: Run true
      command: /bin/true
    - name: Fail on beta
      command: /bin/false
      when: "eq inventory_hostname 'beta'"
`,
  );
  writeFileSync(
    join(dir, 'long.yml'),
    `- name: Long
  hosts: alpha
  gather_facts: false
  tasks:
    - name: Sleep long
      command: sleep 5
    - name: Never reached
      command: /bin/true
`,
  );
  writeFileSync(join(dir, 'broken.yml'), '- name: Broken\n  hosts: all\n  tasks:\n    - name: x\n      no_such_module: {}\n');
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const runArgs = ['run', 'site.yml', '-i', 'inv.yml', '-e', `api_token=${EXTRA_SECRET}`];

describe('tsbm run (built CLI, local hosts)', () => {
  it('plain: one line per host result, recap, exit 2 when a host failed, no secrets', () => {
    const r = tsbm([...runArgs, '--output', 'plain', '-vvv']);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^TASK \[Run true\] \*+$/m);
    expect(r.stdout).toMatch(/^changed: \[alpha\] Run true \(\d+\.\ds\)$/m);
    expect(r.stdout).toMatch(/^skipped: \[alpha\] Fail on beta /m);
    expect(r.stdout).toMatch(/^failed: \[beta\] Fail on beta \(\d+\.\ds\): /m);
    expect(r.stdout).toMatch(/^beta {2}: ok=\d+ +changed=\d+ +unreachable=0 +failed=1 /m);
    expect(r.stdout).toMatch(/^Wall time: /m);
    expect(r.stdout).not.toMatch(/\x1b/);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(r.stdout + r.stderr).not.toContain(EXTRA_SECRET);
  });

  it('json: every line is an event of the published schema; JUnit and the HTML report written; no secrets anywhere', () => {
    const junit = join(dir, 'results.xml');
    const report = join(dir, 'report.html');
    const r = tsbm([...runArgs, '--output', 'json', '--junit', junit, '--report', report, '-vvv']);
    expect(r.code).toBe(2);
    const validate = new Ajv({ strict: false }).compile(eventSchema);
    const events = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string });
    for (const e of events) expect(validate(e), JSON.stringify(validate.errors)).toBe(true);
    expect(events[0]!.type).toBe('run_start');
    expect(events.at(-1)).toMatchObject({ type: 'run_end', exitCode: 2 });
    const xml = readFileSync(junit, 'utf8');
    // one testcase per host per play, the tasks as steps
    expect(xml).toMatch(/<testcase name="alpha" classname="site\.yml\/Demo" time="[\d.]+">/);
    expect(xml).toMatch(/<testcase name="beta" classname="site\.yml\/Demo" time="[\d.]+">\n {6}<failure message="Fail on beta: [^"]+" type="failed">/);
    expect(xml).toMatch(/ok: Say hi \([\d.]+s\): hello beta \*{8}/);
    const perTask = join(dir, 'per-task.xml');
    expect(tsbm([...runArgs, '--output', 'json', '--junit', perTask, '--junit-cases', 'task']).code).toBe(2);
    expect(readFileSync(perTask, 'utf8')).toContain('<testcase name="beta: Fail on beta" classname="site.yml/Demo"');
    const html = readFileSync(report, 'utf8');
    expect(html).toContain('hello beta ********');
    for (const text of [r.stdout, r.stderr, xml, html]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(EXTRA_SECRET);
    }
  }, 120_000);

  it('keeps running to the end when the reader of stdout goes away (| head)', async () => {
    const child = spawn(process.execPath, [bin, ...runArgs, '--output', 'json'], { cwd: dir });
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((res) => child.on('exit', (c) => res(c)));
    expect(code).toBe(2);
    expect(err).not.toMatch(/EPIPE|\n\s+at /);
  });

  it('an inventory with tsbm_sim gets a simulated lab for the run, stopped afterwards', () => {
    writeFileSync(join(dir, 'sim.yml'), 'tsbm_sim:\n  nodes: 1\n');
    writeFileSync(
      join(dir, 'power.yml'),
      '- name: Power\n  hosts: all\n  gather_facts: false\n  tasks:\n    - name: Power off\n      redfish_power:\n        state: "off"\n',
    );
    const r = tsbm(['run', 'power.yml', '-i', 'sim.yml', '--output', 'plain']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^(ok|changed): \[node01\] Power off /m);
    const labDir = join(dir, '.tsbm/sim-auto', createHash('sha256').update(join(dir, 'sim.yml')).digest('hex').slice(0, 12));
    expect(existsSync(labDir)).toBe(true); // the lab ran here
    const record = join(labDir, 'lab.json');
    if (existsSync(record)) {
      const { pid } = JSON.parse(readFileSync(record, 'utf8')) as { pid: number };
      expect(() => process.kill(pid, 0)).toThrow();
    }
  }, 120_000);

  it('a run against a lab of one run (tsbm_sim) cannot be resumed, even with --force: that lab is gone', () => {
    writeFileSync(join(dir, 'sim.yml'), 'tsbm_sim:\n  nodes: 1\n');
    writeFileSync(
      join(dir, 'stop.yml'),
      '- name: Stops\n  hosts: all\n  gather_facts: false\n  tasks:\n    - name: Power off\n      redfish_power: {state: "off"}\n    - name: Stop here\n      fail: {msg: stopped}\n',
    );
    const journalDir = join(dir, 'sim-journals');
    const first = tsbm(['run', 'stop.yml', '-i', 'sim.yml', '--output', 'plain', '--journal-dir', journalDir]);
    expect(first.code, first.stderr).toBe(2);
    // what the lab directories hold, with modification times: a lab started again would change them
    const snapshot = () =>
      readdirSync(join(dir, '.tsbm/sim-auto'), { recursive: true, encoding: 'utf8' })
        .sort()
        .map((f) => `${f} ${statSync(join(dir, '.tsbm/sim-auto', f)).mtimeMs}`);
    const labs = snapshot();
    for (const force of [[], ['--force']]) {
      const again = tsbm(['run', 'stop.yml', '-i', 'sim.yml', '--output', 'plain', '--journal-dir', journalDir, '--resume', 'last', ...force]);
      expect(again.code).toBe(5);
      expect(again.stdout).toBe('');
      expect(again.stderr).toMatch(/^tsbm: error: cannot resume run last: sim\.yml starts a simulated lab for one run \(tsbm_sim\), so the nodes that run drove are gone .*tsbm sim up --nodes N/);
      expect(again.stderr.trim().split('\n')).toHaveLength(1);
    }
    // refused before any lab was started
    expect(snapshot()).toEqual(labs);
  }, 120_000);

  it('writes a redacted run journal (unless --no-journal) and locks hosts against a second run', async () => {
    const journalDir = join(dir, 'journals');
    const r = tsbm([...runArgs, '--output', 'plain', '--journal-dir', journalDir]);
    expect(r.code).toBe(2);
    const files = readdirSync(journalDir);
    expect(files).toHaveLength(1);
    const text = readFileSync(join(journalDir, files[0]!), 'utf8');
    const records = text.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; runId?: string });
    expect(records[0]).toMatchObject({ type: 'journal_start', runId: files[0]!.replace(/\.jsonl$/, '') });
    expect(records.at(-1)).toMatchObject({ type: 'run_end', exitCode: 2 });
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(EXTRA_SECRET);

    const off = join(dir, 'no-journal');
    expect(tsbm([...runArgs, '--no-journal', '--journal-dir', off]).code).toBe(2);
    expect(existsSync(off)).toBe(false);

    // a second run while the first holds alpha's lock is refused, naming the holder
    const lockDir = join(dir, 'lock-journals');
    // The first run holds alpha for 30 s: long enough for the second to start on a loaded machine.
    writeFileSync(join(dir, 'hold.yml'), '- hosts: alpha\n  gather_facts: false\n  tasks:\n    - name: Sleep long\n      command: sleep 30\n');
    const first = spawn(process.execPath, [bin, 'run', 'hold.yml', '-i', 'inv.yml', '--journal-dir', lockDir], { cwd: dir });
    let firstOut = '';
    first.stdout.on('data', (d: Buffer) => {
      firstOut += d.toString();
    });
    const firstExit = new Promise<number | null>((res) => first.on('exit', (c) => res(c)));
    while (!firstOut.includes('TASK [Sleep long]')) await new Promise((res) => setTimeout(res, 50));
    const firstId = readdirSync(lockDir)[0]!.replace(/\.jsonl$/, '');
    const second = tsbm(['run', 'long.yml', '-i', 'inv.yml', '--journal-dir', lockDir, '--output', 'plain']);
    expect(second.code).not.toBe(0);
    expect(second.stdout).toContain(`host alpha is locked by run ${firstId}`);
    expect(await firstExit).toBe(0);
    expect(readdirSync(process.env.TSBM_LOCK_DIR!)).toEqual([]);
  }, 120_000);

  it('--list-tasks lists without running; a broken playbook is exit 4 with file:line:col', () => {
    const list = tsbm(['run', 'site.yml', '-i', 'inv.yml', '--list-tasks']);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('Say hi');
    const broken = tsbm(['run', 'broken.yml', '-i', 'inv.yml']);
    expect(broken.code).toBe(4);
    expect(broken.stdout).toMatch(/^broken\.yml:\d+:\d+: unknown module .*"no_such_module"/m);
    expect(broken.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^tsbm: error: 1 error in broken\.yml found before the first task; nothing was run/),
    ]);
  });

  const runLong = () => {
    const child = spawn(process.execPath, [bin, 'run', 'long.yml', '-i', 'inv.yml', '--output', 'plain'], { cwd: dir });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const started = new Promise<void>((res) => {
      const check = () => (out.includes('TASK [Sleep long]') ? res() : setTimeout(check, 50));
      check();
    });
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    return { child, started, exited, output: () => out };
  };

  it('Ctrl-C: running task finishes, nothing new starts, recap, exit 99', async () => {
    const run = runLong();
    await run.started;
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(99);
    // Never started (no header, no result); the recap names it as where the host stopped.
    expect(run.output()).not.toMatch(/TASK \[Never reached\]|\] Never reached/);
    expect(run.output()).toContain('PLAY RECAP');
    expect(run.output()).toContain('alpha: unfinished: interrupted before "Never reached"');
  });

  it('SIGTERM (cancelled CI job) stops like Ctrl-C, exit 99', async () => {
    const run = runLong();
    await run.started;
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(99);
    expect(run.output()).not.toMatch(/TASK \[Never reached\]|\] Never reached/);
    expect(run.output()).toContain('PLAY RECAP');
  });

  it('Ctrl-C twice: exits 99 at once', async () => {
    const run = runLong();
    await run.started;
    run.child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 200));
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(99);
    // At once: the running task is not waited for (it would have printed its result).
    expect(run.output()).not.toMatch(/: \[alpha\] Sleep long/);
  });
});
