// The lab's side of its spawner processes (spawner.c, or spawner-worker.ts where it cannot be built):
// commands are started there, and their stdin/stdout and stderr arrive here as unix sockets the
// spawner connected before it forked. A big lab process then never forks, so its event loop
// keeps serving BMCs and SSH.
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { availableParallelism } from 'node:os';
import { PassThrough } from 'node:stream';
import type { SshExecProcess } from './exec-process.js';
import {
  defaultSpawnerKind,
  helperStarter,
  type SpawnerHelper,
  type SpawnerKind,
} from './spawner-helpers.js';
import { HEADER_BYTES, readStreamHeader, type SpawnReply, type SpawnRequest } from './spawner-protocol.js';

class PooledProcess extends EventEmitter implements SshExecProcess {
  readonly stdin = new PassThrough();
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** The spawner running this command (its death fails the command). */
  worker: SpawnerHelper | undefined;
  private openStreams = 2;
  private finished = false;

  constructor(
    readonly id: number,
    private readonly sendKill: (signal: NodeJS.Signals) => void,
  ) {
    super();
  }

  private io: Socket | undefined;
  private isStarted = false;

  attach(kind: number, sock: Socket): void {
    if (kind === 0) {
      this.io = sock;
      sock.pipe(this.stdout);
      this.feedStdin();
    } else sock.pipe(this.stderr);
    sock.once('end', () => this.streamEnded());
    sock.on('error', () => this.streamEnded());
  }

  private streamEnded(): void {
    this.openStreams--;
    this.maybeClose();
  }

  /** The command's process (group leader): killed here if its spawner dies first. */
  pid: number | undefined;

  started(pid?: number): void {
    this.pid = pid;
    this.isStarted = true;
    this.feedStdin();
  }

  private feedStdin(): void {
    if (this.io && this.isStarted) this.stdin.pipe(this.io);
  }

  exited(code: number | null, signal: NodeJS.Signals | null): void {
    this.exit = { code, signal };
    this.maybeClose();
  }

  failed(message: string): void {
    if (this.finished) return;
    this.finished = true;
    this.emit('error', new Error(message));
  }

  private maybeClose(): void {
    if (this.finished || !this.exit || this.openStreams > 0) return;
    this.finished = true;
    this.emit('close', this.exit.code, this.exit.signal);
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.exit || this.finished) return false;
    this.sendKill(signal);
    return true;
  }
}

export class SpawnerPool {
  private next = 0;
  private lastId = 0;
  private readonly pending = new Map<number, PooledProcess>();
  private readonly sockets = new Set<Socket>();

  private readonly workers: SpawnerHelper[] = [];

  private constructor(private readonly server: Server) {}

  /**
   * Starts `count` spawners of `kind` (C where a compiler builds it, else node; TSBM_SIM_SPAWNER=node
   * asks for node);
   * undefined when that kind cannot run here (the lab then forks commands itself).
   */
  static async start(
    count = Math.min(4, Math.max(2, availableParallelism())),
    kind: SpawnerKind = defaultSpawnerKind(),
  ): Promise<SpawnerPool | undefined> {
    const startHelper = helperStarter(kind);
    if (!startHelper) return undefined;
    const name = `tsbm-sim-spawn-${process.pid}-${randomBytes(6).toString('hex')}`;
    let pool: SpawnerPool | undefined;
    const server = createServer((sock) => pool?.onSocket(sock));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      // A deep backlog: a thousand nodes' commands can start within one busy tick of the lab.
      server.listen({ path: `\0${name}`, backlog: 4096 }, () => resolve());
    });
    const p = new SpawnerPool(server);
    pool = p;
    for (let i = 0; i < count; i++) {
      const w = startHelper(`@${name}`, (m) => p.onReply(m));
      p.workers.push(w);
      // 'close', not 'exit': replies it wrote before dying may still be in its stdout pipe.
      w.process.once('close', () => p.workerGone(w));
      w.process.once('error', () => p.workerGone(w));
    }
    return p;
  }

  spawn(file: string, args: string[], opts: { cwd?: string; env: Record<string, string> }): SshExecProcess {
    this.lastId = (this.lastId + 1) >>> 0 || 1; // ids fit the 4-byte stream header
    const id = this.lastId;
    const worker = this.workers[this.next++ % this.workers.length];
    const proc = new PooledProcess(id, (signal) => worker?.signal(id, signal));
    if (worker) proc.worker = worker;
    this.pending.set(id, proc);
    proc.once('close', () => this.pending.delete(id));
    proc.once('error', () => this.pending.delete(id));
    const req: SpawnRequest = { id, file, args, env: opts.env, ...(opts.cwd ? { cwd: opts.cwd } : {}) };
    if (!worker?.open) queueMicrotask(() => proc.failed('the lab has no spawner process left'));
    else {
      try {
        worker.send(req);
      } catch (e) {
        queueMicrotask(() => proc.failed((e as Error).message));
      }
    }
    return proc;
  }

  private onReply(m: SpawnReply): void {
    const proc = this.pending.get(m.id);
    if (!proc) return;
    if ('error' in m) proc.failed(m.error);
    else if ('started' in m) proc.started(m.pid);
    else proc.exited(m.code, m.signal);
  }

  private onSocket(sock: Socket): void {
    this.sockets.add(sock);
    sock.once('close', () => this.sockets.delete(sock));
    sock.on('error', () => {});
    const readHeader = (): void => {
      const head = sock.read(HEADER_BYTES) as Buffer | null;
      if (!head) return;
      sock.off('readable', readHeader);
      const { id, kind } = readStreamHeader(head);
      const proc = this.pending.get(id);
      if (proc) proc.attach(kind, sock);
      else sock.destroy();
    };
    sock.on('readable', readHeader);
  }

  private workerGone(w: SpawnerHelper): void {
    const i = this.workers.indexOf(w);
    if (i >= 0) this.workers.splice(i, 1);
    // Its commands' exit statuses will never come: fail them rather than leave a session hanging.
    for (const p of [...this.pending.values()]) {
      if (p.worker !== w || p.exit) continue;
      if (p.pid !== undefined) {
        try {
          process.kill(-p.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
      p.failed('the spawner process running this command died');
    }
  }

  async close(): Promise<void> {
    for (const p of this.pending.values()) p.kill('SIGKILL');
    for (const w of this.workers.splice(0)) w.close();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
