// Secrets in every output, not only the files of a successful run (secrets-at-rest.test.ts): a
// deploy on a simulated node rendered live on a real terminal (the TTY renderer, under `script`'s
// pseudo-terminal) with the HTML report and JUnit; its JSON twin with a report; two runs that fail
// with a secret in their way (a command that prints it to stderr and fails; a BMC refusing a
// wrong password that is itself secret); then the node's disk, read where it holds data. Every
// byte written or printed is searched for every secret, in clear and in base64.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { Lab } from '../../packages/lab/src/lab/lab.js';
import { type CliRun, DEPLOY, runTsbm, TSBM } from '../helpers/fault-cli.js';
import { startSecretLab } from '../helpers/secret-lab.js';

let lab: Lab;
let root = '';
let work = '';
const secrets = { bmc: '', pull: '', api: '', wrongBmc: '' };

beforeAll(async () => {
  const s = await startSecretLab('tsbm-secrets-outputs-');
  ({ lab, root, work } = s);
  const { inventory: labInv, node, driverInfo: di } = s;
  secrets.bmc = String(di.redfish_password);
  secrets.pull = String(labInv.all.vars.instance_info.image_pull_secret);
  secrets.api = `api-${Math.random().toString(36).slice(2)}-token`;
  secrets.wrongBmc = `wrong-${Math.random().toString(36).slice(2)}-pw`;
  node.driver_info = { ...di, redfish_password: '{{ bmc_pw }}' };
  labInv.all.vars.instance_info = { ...labInv.all.vars.instance_info, image_pull_secret: '{{ pull_auth }}' };
  writeFileSync(join(work, 'inventory.yml'), stringify(labInv));
  writeFileSync(join(work, 'secrets.yml'), `pull_auth: ${secrets.pull}\n`);
  writeFileSync(join(work, 'local.yml'), 'all:\n  hosts:\n    ctl:\n      ansible_connection: local\n');
  // A command that prints a secret to stderr and fails: the failure's message carries it.
  writeFileSync(
    join(work, 'fail.yml'),
    `- hosts: all
  gather_facts: false
  tasks:
    - name: Call the API
      command: sh -c 'echo "auth failed for token {{ secret api }}" >&2; exit 3'
`,
  );
}, 120_000);
afterAll(async () => {
  await lab?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

const env = () => ({ ...process.env, TSBM_LOCK_DIR: join(work, 'locks'), TERM: 'xterm-256color', COLUMNS: '120', LINES: '40' });
const deployArgs = (bmc: string) => ['-i', 'inventory.yml', '-e', `bmc_pw=${bmc}`, '-e', '@secrets.yml', '--journal-dir', join(work, 'runs')];
const run = (args: string[]): Promise<CliRun> => runTsbm(['run', ...args], { cwd: work, env: env(), timeoutMs: 180_000 });
const shq = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** Every file under `dir` with its modification time. */
function mtimes(dir: string, out = new Map<string, number>()): Map<string, number> {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) mtimes(p, out);
    else if (st.isFile()) out.set(p, st.mtimeMs);
  }
  return out;
}

let before = new Map<string, number>();
/** Files under `dir` new or changed since `before` (what the runs wrote), but those in `skip`. */
function files(dir: string, skip: Set<string>): string[] {
  return [...mtimes(dir)].filter(([p, m]) => before.get(p) !== m && !skip.has(p)).map(([p]) => p);
}

/** Which needles a sparse file holds, reading only its data extents (SEEK_DATA/SEEK_HOLE). */
function needlesInSparse(file: string, needles: string[]): string[] {
  const py = `
import os, sys
f = sys.argv[1]; needles = [n.encode() for n in sys.argv[2:]]
fd = os.open(f, os.O_RDONLY); end = os.fstat(fd).st_size; off = 0; found = set(); tail = b''
while off < end:
    try:
        start = os.lseek(fd, off, os.SEEK_DATA)
    except OSError:
        break
    stop = os.lseek(fd, start, os.SEEK_HOLE)
    pos = start
    while pos < stop:
        chunk = os.pread(fd, min(8 << 20, stop - pos), pos)
        buf = tail + chunk
        for n in needles:
            if n in buf: found.add(n.decode())
        tail = chunk[-256:]; pos += len(chunk)
    off = stop
print("\\n".join(sorted(found)))
`;
  const r = spawnSync('python3', ['-c', py, file, ...needles], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`scanning ${file}: ${r.stderr}`);
  return r.stdout.split('\n').filter(Boolean);
}

describe('no secret in any output', () => {
  it('TTY, JSON, HTML report, JUnit, journals, error messages and the node disk hold no secret', async () => {
    // What the lab wrote before the runs (its inventory, its nodes' copy of its registry's credentials) is not theirs.
    before = mtimes(root);
    // A live deploy on a terminal: `script` gives it a pseudo-terminal and keeps what it drew.
    // (`script` echoes the terminal to its stdout; its own log, which names the command, is not kept.)
    const cmd = [process.execPath, TSBM, 'run', DEPLOY, ...deployArgs(secrets.bmc), '-e', JSON.stringify({ api: secrets.api }), '--report', 'tty.html', '--junit', 'tty.xml'];
    // Async: the lab serves from this process, so a synchronous spawn would stall its BMCs.
    const tty = await new Promise<{ status: number | null; stdout: string; stderr: string }>((res) => {
      const c = spawn('script', ['-qefc', `stty cols 120 rows 40; exec ${cmd.map(shq).join(' ')}`, '/dev/null'], { cwd: work, env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      c.stdout.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
      });
      c.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
      });
      const guard = setTimeout(() => c.kill('SIGKILL'), 400_000);
      c.on('close', (status) => {
        clearTimeout(guard);
        res({ status, stdout, stderr });
      });
    });
    writeFileSync(join(work, 'tty.out'), tty.stdout + tty.stderr);
    expect(tty.status, tty.stdout.slice(-2000)).toBe(0);
    // The live renderer drew it (cursor movement), not the plain one.
    expect(tty.stdout).toMatch(/\x1b\[\d*[AK]/);

    const json = await run([DEPLOY, ...deployArgs(secrets.bmc), '--rebuild', '--output', 'json', '--report', 'json.html', '--junit', 'json.xml']);
    expect(json.code, json.stderr).toBe(0);
    writeFileSync(join(work, 'json.out'), json.stdout + json.stderr);

    // Errors: a failing command printed the secret; a BMC refused a wrong (secret) password.
    const failed = await run(['fail.yml', '-i', 'local.yml', '-e', JSON.stringify({ api: secrets.api }), '--journal-dir', join(work, 'runs'), '--output', 'plain', '-v', '--report', 'fail.html', '--junit', 'fail.xml']);
    expect(failed.code, failed.stdout + failed.stderr).toBe(2);
    expect(failed.stdout + failed.stderr).toMatch(/auth failed for token \*{8}/);
    writeFileSync(join(work, 'fail.out'), failed.stdout + failed.stderr);
    const refused = await run([DEPLOY, ...deployArgs(secrets.wrongBmc), '--rebuild', '--output', 'plain', '--report', 'refused.html']);
    expect(refused.code, refused.stdout + refused.stderr).not.toBe(0);
    expect(refused.stdout + refused.stderr).toMatch(/401|unauthori[sz]ed|credentials|password/i);
    writeFileSync(join(work, 'refused.out'), refused.stdout + refused.stderr);

    const disk = join(lab.dir, 'nodes', 'node01', 'root', 'dev', 'vda');
    const inputs = new Set(['inventory.yml', 'secrets.yml', 'local.yml', 'fail.yml'].map((f) => join(work, f)));
    const written = [...files(work, inputs), ...files(join(lab.dir, 'nodes'), new Set([disk]))];
    const names = written.map((f) => f.slice(root.length + 1));
    // What must have been searched: four reports, three JUnit files, the journals, the terminal's bytes.
    expect(names).toEqual(expect.arrayContaining(['work/tty.html', 'work/json.html', 'work/fail.html', 'work/refused.html', 'work/tty.xml', 'work/json.xml', 'work/fail.xml', 'work/tty.out']));
    expect(names.filter((n) => n.startsWith('work/runs/')).length).toBeGreaterThanOrEqual(4);
    const forms = Object.entries(secrets).flatMap(([how, v]) => [
      [how, v],
      [`${how} (base64)`, Buffer.from(v).toString('base64')],
    ]);
    const leaks: string[] = [];
    for (const f of written) {
      const bytes = readFileSync(f);
      for (const [how, form] of forms) if (bytes.includes(form!)) leaks.push(`${f.slice(root.length + 1)}: the ${how} secret`);
    }
    // The node's disk: the deploy wrote its image and config drive there; no secret with them.
    const onDisk = needlesInSparse(
      disk,
      forms.map(([, f]) => f!),
    );
    for (const f of onDisk) leaks.push(`the node's disk: ${forms.find(([, v]) => v === f)![0]} secret`);
    expect(leaks).toEqual([]);
    // The scan can find: the disk holds what the deploy wrote (the config drive's metadata).
    expect(needlesInSparse(disk, ['openstack'])).toEqual(['openstack']);
  }, 900_000);
});
