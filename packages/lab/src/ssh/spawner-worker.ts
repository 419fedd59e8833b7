// A small helper process that starts the simulated ramdisk's commands for the lab where the C
// spawner cannot be built (no compiler; spawner.c does the job otherwise, more cheaply).
// Forking a process copies the parent's page tables and blocks the parent until the child has
// exec'd, so a lab holding a thousand nodes (hundreds of MiB) would spend most of its event loop
// inside spawn(). This process stays small; its child's stdio are unix sockets connected
// straight to the lab, so no output passes through here.
import { type ChildProcess, spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import type { SpawnReply, SpawnRequest } from './spawner-protocol.js';
import { streamHeader } from './spawner-protocol.js';

// `@name` is a Linux abstract socket (argv cannot carry its leading NUL byte).
const arg = process.argv[2];
const address = arg?.startsWith('@') ? `\0${arg.slice(1)}` : arg;
if (!address || !process.send) {
  process.stderr.write('spawner-worker: run by the simulated lab only\n');
  process.exit(2);
}
const running = new Map<number, ChildProcess>();
/** Kills that arrived while their command was still being started. */
const killedEarly = new Map<number, NodeJS.Signals>();

function reply(m: SpawnReply): void {
  process.send?.(m);
}

function openOnce(id: number, kind: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(address!);
    s.once('error', reject);
    s.once('connect', () => s.write(streamHeader(id, kind), () => resolve(s)));
  });
}

/** A busy lab may not have accepted earlier connections yet (a full backlog says EAGAIN): wait and retry. */
async function open(id: number, kind: number): Promise<Socket> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await openOnce(id, kind);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN' || attempt >= 200) throw e;
      await new Promise((r) => setTimeout(r, Math.min(5 * attempt, 100)));
    }
  }
}

async function start(req: SpawnRequest): Promise<void> {
  let io: Socket | undefined;
  let err: Socket | undefined;
  let pid: number | undefined;
  try {
    io = await open(req.id, 0);
    err = await open(req.id, 1);
    // A process group of its own so a signal reaches the whole pipeline, not only sh.
    const child = spawn(req.file, req.args, { cwd: req.cwd, env: req.env, stdio: [io, io, err], detached: true });
    child.once('error', (e) => {
      running.delete(req.id);
      reply({ id: req.id, error: e.message });
    });
    pid = child.pid;
    if (child.pid !== undefined) running.set(req.id, child);
    const early = killedEarly.get(req.id);
    if (early) {
      killedEarly.delete(req.id);
      killGroup(child, early);
    }
    child.once('exit', (code, signal) => {
      running.delete(req.id);
      reply({ id: req.id, code, signal });
    });
  } catch (e) {
    reply({ id: req.id, error: (e as Error).message });
    return;
  } finally {
    // The child holds its own copies; the lab sees end of output only when every copy is closed.
    io?.destroy();
    err?.destroy();
  }
  reply({ id: req.id, started: true, ...(pid !== undefined ? { pid } : {}) });
}

process.on('message', (m: SpawnRequest | { id: number; kill: NodeJS.Signals }) => {
  if ('kill' in m) {
    const child = running.get(m.id);
    if (child) killGroup(child, m.kill);
    else killedEarly.set(m.id, m.kill);
    return;
  }
  void start(m);
});

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    child.kill(signal); // the group is gone already; the leader may not be
  }
}

// The lab went away: nothing of ours may outlive it.
process.on('disconnect', () => {
  for (const c of running.values()) killGroup(c, 'SIGKILL');
  process.exit(0);
});
