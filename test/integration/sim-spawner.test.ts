// The lab's spawner processes: commands started there behave like children of the lab (stdin,
// stdout, stderr, exit status, signals, process-group kill), and the lab itself forks nothing.
// Every case runs against both spawners: C (the default where a compiler exists) and its node
// fallback. Then: how the C spawner is built, cached, and given up for node.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SshExecProcess } from '../../packages/lab/src/ssh/exec.js';
import { cSpawnerBinary, type SpawnerKind } from '../../packages/lab/src/ssh/spawner-helpers.js';
import { SpawnerPool } from '../../packages/lab/src/ssh/spawner-pool.js';

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
}

/** Alive and not a zombie (this container's init may be slow to reap orphans). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function collect(p: SshExecProcess, input?: string): Promise<Ran> {
  let out = '';
  let err = '';
  p.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  p.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  if (input !== undefined) p.stdin?.end(input);
  else p.stdin?.end();
  return new Promise((resolve, reject) => {
    p.once('error', reject);
    p.once('close', (code, signal) => resolve({ code, signal, out, err }));
  });
}

/** Polls until the condition holds (or 30 s pass: the assertion after it then says what did not happen). */
async function until(cond: () => boolean): Promise<void> {
  for (const end = Date.now() + 30_000; !cond() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
}

/** How many processes run exactly this command line (distinct sleep lengths keep the cases apart). */
function countRunning(commandLine: string): string {
  return execFileSync('sh', ['-c', `ps -eo args | grep -cx "${commandLine}" || true`], {
    encoding: 'utf8',
  }).trim();
}

function helpers(p: SpawnerPool): ChildProcess[] {
  return (p as unknown as { workers: { process: ChildProcess }[] }).workers.map((w) => w.process);
}

async function startPool(kind: SpawnerKind, count: number): Promise<SpawnerPool> {
  const p = await SpawnerPool.start(count, kind);
  if (!p) throw new Error(`no ${kind} spawner: packages/lab/dist not built (\`npm run build\`)`);
  return p;
}

/** The one thing that skips: the C spawner on a machine without a working C compiler. */
const cBinary = cSpawnerBinary();
const noCompiler = 'no C compiler (cc or gcc) on PATH, or it cannot build packages/lab/src/ssh/spawner.c';
if (!cBinary) console.warn(`sim-spawner: the C spawner's cases are skipped: ${noCompiler}`);

const kinds = [
  { kind: 'c', title: cBinary ? 'c' : `c, SKIPPED: ${noCompiler}` },
  { kind: 'node', title: 'node' },
] as const;

describe.each(kinds)('lab spawner pool ($title)', ({ kind }) => {
  if (kind === 'c' && !cBinary) {
    it.skip(noCompiler, () => {});
    return;
  }
  let pool: SpawnerPool;
  const env = { PATH: '/usr/bin:/bin', LANG: 'C' };

  beforeAll(async () => {
    pool = await startPool(kind, 2);
  });
  afterAll(async () => {
    await pool?.close();
  });

  it(`runs its commands from ${kind}`, () => {
    // The kernel keeps 15 bytes of the name: the compiled binary shows as "tsbm-spawner-" and two hex digits.
    const name = kind === 'c' ? basename(cBinary!).slice(0, 15) : kind;
    for (const h of helpers(pool)) expect(readFileSync(`/proc/${h.pid}/comm`, 'utf8').trim()).toBe(name);
  });

  it('passes stdin through and returns stdout, stderr and the exit code', async () => {
    const r = await collect(
      pool.spawn('/bin/sh', ['-c', 'tr a-z A-Z; echo "to stderr" >&2; exit 3'], { env }),
      'hello\n',
    );
    expect(r).toEqual({ code: 3, signal: null, out: 'HELLO\n', err: 'to stderr\n' });
  });

  it('runs in the given directory with exactly the given environment', async () => {
    const script = 'pwd; echo "$LANG:$' + '{HOME-unset}"'; // sh's own expansion, not a JS template
    const r = await collect(pool.spawn('/bin/sh', ['-c', script], { cwd: '/tmp', env }));
    expect(r.out).toBe('/tmp\nC:unset\n');
  });

  it('carries binary output and large output intact', async () => {
    const r = await collect(pool.spawn('/bin/sh', ['-c', 'head -c 3000000 /dev/zero | tr "\\0" x'], { env }));
    expect(r.code).toBe(0);
    expect(r.out.length).toBe(3_000_000);
  });

  it('kills the whole process group, grandchildren included', async () => {
    const p = pool.spawn('/bin/sh', ['-c', 'sleep 30 & echo $!; wait'], { env });
    let out = '';
    p.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    p.stdin?.end();
    while (!out.includes('\n')) await new Promise((r) => setTimeout(r, 20));
    const grandchild = Number(out.trim());
    const closed = new Promise<[number | null, NodeJS.Signals | null]>((r) =>
      p.once('close', (c, s) => r([c, s])),
    );
    expect(p.kill('SIGKILL')).toBe(true);
    expect(await closed).toEqual([null, 'SIGKILL']);
    await new Promise((r) => setTimeout(r, 100));
    expect(running(grandchild)).toBe(false);
  });

  it('a kill sent while the command is still starting still lands', async () => {
    const p = pool.spawn('/bin/sh', ['-c', 'sleep 30'], { env });
    p.kill('SIGTERM');
    const r = await collect(p);
    expect(r.signal).toBe('SIGTERM');
  });

  it('reports a command that cannot start as an error', async () => {
    const p = pool.spawn('/nonexistent/tool', [], { env });
    await expect(collect(p)).rejects.toThrow(/ENOENT/);
    const q = pool.spawn('/bin/sh', ['-c', 'true'], { cwd: '/nonexistent-dir', env });
    await expect(collect(q)).rejects.toThrow(/ENOENT/);
    // and the next command runs where it should
    expect((await collect(pool.spawn('/bin/sh', ['-c', 'pwd'], { env }))).out).toBe(`${process.cwd()}\n`);
  });

  it('passes arguments and environment with newlines, quotes, tabs and non-ASCII bytes intact', async () => {
    const odd = ['line one\nline two', `it's "quoted" \\ $HOME`, 'tab\there', 'Grüße, 日本 🚀', '', ' '];
    const script = 'printf "[%s]\\n" "$@"; printf "<%s>\\n" "$ODD"; echo \'a\nb\' "ä"';
    const r = await collect(
      pool.spawn('/bin/sh', ['-c', script, 'sh', ...odd], { env: { ...env, ODD: odd.join('\n') } }),
    );
    expect(r.code).toBe(0);
    expect(r.out).toBe(odd.map((a) => `[${a}]\n`).join('') + `<${odd.join('\n')}>\n` + 'a\nb ä\n');
  });

  it('keeps up with many concurrent commands', async () => {
    const n = 200;
    const runs = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        collect(pool.spawn('/bin/sh', ['-c', `echo ${i}; echo e${i} >&2; exit ${i % 7}`], { env })),
      ),
    );
    expect(runs).toEqual(
      Array.from({ length: n }, (_, i) => ({ code: i % 7, signal: null, out: `${i}\n`, err: `e${i}\n` })),
    );
  });

  it('kills the group of a command killed before it started, with the same signal', async () => {
    const p = pool.spawn('/bin/sh', ['-c', 'sleep 31.3 & wait'], { env });
    p.kill('SIGKILL');
    const r = await collect(p);
    expect(r.signal).toBe('SIGKILL');
    await new Promise((res) => setTimeout(res, 100));
    expect(countRunning('sleep 31.3')).toBe('0');
  });

  it('a spawner that dies fails its running commands instead of hanging them', async () => {
    const p = await startPool(kind, 1);
    try {
      const proc = p.spawn('/bin/sh', ['-c', 'sleep 31.9'], { env });
      proc.stdin?.end();
      const count = () => countRunning('sleep 31.9');
      for (let i = 0; i < 100 && count() === '0'; i++) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 100)); // its "started" report (with the pid) follows the spawn
      const worker = helpers(p)[0]!;
      const failed = new Promise<Error>((resolve) => proc.once('error', resolve));
      worker.kill('SIGKILL');
      expect((await failed).message).toMatch(/spawner process .* died/);
      await new Promise((r) => setTimeout(r, 100));
      expect(count()).toBe('0'); // the lab killed the orphaned command itself
    } finally {
      await p.close();
    }
  });

  it('close() leaves no worker and no command behind', async () => {
    const p = await startPool(kind, 1);
    const helper = helpers(p)[0]!.pid!;
    const proc = p.spawn('/bin/sh', ['-c', 'sleep 31.7'], { env });
    proc.stdin?.end();
    await until(() => (proc as { pid?: number }).pid !== undefined);
    await p.close();
    // However loaded the machine, both go (waited for, not timed: a slow exit is no failure).
    await until(() => countRunning('sleep 31.7') === '0' && !running(helper));
    expect(countRunning('sleep 31.7')).toBe('0');
    expect(running(helper)).toBe(false);
  });

  it('a lab that dies takes its spawners and their commands with it', async () => {
    // A lab of its own (from dist) that starts a command, prints its spawner's pid and waits.
    const pool = new URL('../../packages/lab/dist/ssh/spawner-pool.js', import.meta.url).href;
    const script = `const { SpawnerPool } = await import(${JSON.stringify(pool)});
      const p = await SpawnerPool.start(1, ${JSON.stringify(kind)});
      const c = p.spawn('/bin/sh', ['-c', 'sleep 31.5'], { env: { PATH: '/usr/bin:/bin' } });
      c.stdin.end();
      const t = setInterval(() => { if (c.pid !== undefined) { clearInterval(t); console.log(p.workers[0].process.pid); } }, 20);`;
    const lab = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let helper: number;
    try {
      helper = await new Promise<number>((resolve, reject) => {
        lab.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
        lab.once('exit', (code) => reject(new Error(`the lab exited early (${code})`)));
      });
      expect(running(helper)).toBe(true);
      expect(countRunning('sleep 31.5')).toBe('1');
    } finally {
      lab.kill('SIGKILL');
    }
    await until(() => !running(helper) && countRunning('sleep 31.5') === '0');
    expect(running(helper)).toBe(false);
    expect(countRunning('sleep 31.5')).toBe('0');
  });
});

describe('the C spawner build', () => {
  const dist = new URL('../../packages/lab/dist/ssh/spawner-helpers.js', import.meta.url).href;
  let dir: string;
  let realCc: string | undefined;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-spawner-build-'));
    realCc = ['cc', 'gcc']
      .flatMap((n) => (process.env.PATH ?? '').split(':').map((d) => join(d, n)))
      .find((f) => {
        try {
          return statSync(f).isFile();
        } catch {
          return false;
        }
      });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A `cc` of our own first on PATH: it logs each run to `log`, then runs `body`. */
  function fakeCc(name: string, body: string): { bin: string; log: string } {
    const bin = join(dir, name);
    const log = join(dir, `${name}.log`);
    mkdirSync(bin);
    writeFileSync(join(bin, 'cc'), `#!/bin/sh\necho run >> '${log}'\n${body}\n`, { mode: 0o755 });
    return { bin, log };
  }

  /** A fresh process (nothing memoized) with its own cache and PATH: what the lab would pick. */
  function inFreshProcess(cache: string, path: string, spawner?: string): { kind: string; binary: string } {
    const script = `const m = await import(${JSON.stringify(dist)});
      const kind = m.defaultSpawnerKind();
      const again = m.cSpawnerBinary(); // memoized: no second build in one process
      const pool = await (await import(${JSON.stringify(dist.replace('spawner-helpers', 'spawner-pool'))})).SpawnerPool.start(1);
      const c = pool.spawn('/bin/sh', ['-c', 'echo ran'], { env: { PATH: '/usr/bin:/bin' } });
      let out = '';
      c.stdout.on('data', (d) => (out += d));
      c.stdin.end();
      await new Promise((r) => c.once('close', r));
      await pool.close();
      console.log(JSON.stringify({ kind, binary: again ?? '', out }));`;
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: path, XDG_CACHE_HOME: cache };
    if (spawner) env.TSBM_SIM_SPAWNER = spawner;
    else delete env.TSBM_SIM_SPAWNER;
    const line = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env,
      encoding: 'utf8',
    });
    const r = JSON.parse(line) as { kind: string; binary: string; out: string };
    expect(r.out).toBe('ran\n');
    return r;
  }

  it.skipIf(!cBinary)('compiles once into the cache; the next lab runs the cached binary', () => {
    const { bin, log } = fakeCc('counting', `exec '${realCc}' "$@"`);
    const cache = join(dir, 'cache1');
    const path = `${bin}:${process.env.PATH}`;
    const first = inFreshProcess(cache, path);
    expect(first.kind).toBe('c');
    expect(first.binary.startsWith(join(cache, 'tsbm', 'tsbm-spawner-'))).toBe(true);
    const built = statSync(first.binary);
    const second = inFreshProcess(cache, path);
    expect(second).toEqual(first);
    expect(statSync(second.binary).mtimeMs).toBe(built.mtimeMs);
    expect(readFileSync(log, 'utf8')).toBe('run\n'); // one compile for both labs
    expect(readdirSync(join(cache, 'tsbm'))).toEqual([basename(first.binary)]); // no temp file left
  });

  it('falls back to node when the compiler fails, whether or not c was asked for', () => {
    const { bin, log } = fakeCc('broken', 'echo "cc: broken" >&2; exit 1');
    const cache = join(dir, 'cache2');
    const path = `${bin}:${process.env.PATH}`;
    expect(inFreshProcess(cache, path).kind).toBe('node');
    expect(inFreshProcess(cache, path, 'c').kind).toBe('node');
    expect(readFileSync(log, 'utf8')).toBe('run\nrun\n'); // once per process, not per call
    expect(readdirSync(join(cache, 'tsbm'))).toEqual([]); // nothing half-written is left to run
  });
});
