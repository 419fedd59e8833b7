// The lab's spawner processes: commands started there behave like children of the lab (stdin,
// stdout, stderr, exit status, signals, process-group kill), and the lab itself forks nothing.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SshExecProcess } from '../../src/sim/ssh/exec.js';
import { SpawnerPool } from '../../src/sim/ssh/spawner-pool.js';

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

describe('lab spawner pool', () => {
  let pool: SpawnerPool;
  const env = { PATH: '/usr/bin:/bin', LANG: 'C' };

  beforeAll(async () => {
    const p = await SpawnerPool.start(2);
    if (!p) throw new Error('dist/sim/ssh/spawner-worker.js is missing: run `npm run build` first');
    pool = p;
  });
  afterAll(async () => {
    await pool?.close();
  });

  it('passes stdin through and returns stdout, stderr and the exit code', async () => {
    const r = await collect(pool.spawn('/bin/sh', ['-c', 'tr a-z A-Z; echo "to stderr" >&2; exit 3'], { env }), 'hello\n');
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
    const closed = new Promise<[number | null, NodeJS.Signals | null]>((r) => p.once('close', (c, s) => r([c, s])));
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
  });

  it('keeps up with many concurrent commands', async () => {
    const runs = await Promise.all(Array.from({ length: 200 }, (_, i) => collect(pool.spawn('/bin/sh', ['-c', `echo ${i}`], { env }))));
    expect(runs.map((r) => r.out)).toEqual(Array.from({ length: 200 }, (_, i) => `${i}\n`));
  });

  it("a spawner that dies fails its running commands instead of hanging them", async () => {
    const p = (await SpawnerPool.start(1))!;
    try {
      const proc = p.spawn('/bin/sh', ['-c', 'sleep 31.9'], { env });
      proc.stdin?.end();
      const count = () => execFileSync('sh', ['-c', 'ps -eo args | grep -c "[s]leep 31.9" || true'], { encoding: 'utf8' }).trim();
      for (let i = 0; i < 100 && count() === '0'; i++) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 100)); // its "started" report (with the pid) follows the spawn
      const worker = (p as unknown as { workers: { kill(s: string): void }[] }).workers[0]!;
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
    const p = await SpawnerPool.start(1);
    const proc = p!.spawn('/bin/sh', ['-c', 'sleep 31.7'], { env });
    proc.stdin?.end();
    await new Promise((r) => setTimeout(r, 200));
    await p!.close();
    await new Promise((r) => setTimeout(r, 300));
    const left = execFileSync('sh', ['-c', 'ps -eo args | grep -c "[s]leep 31.7" || true'], { encoding: 'utf8' }).trim();
    expect(left).toBe('0');
  });
});
