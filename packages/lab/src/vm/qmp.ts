// A QMP client (QEMU's JSON machine protocol) over the VM's unix socket: one command at a time,
// answers in order, events to a listener. The lab drives its VMs' power, CD drive and boot order
// through it, and tests read the VM's state back through it.
import { type Socket, connect } from 'node:net';

export type QmpEvent = { event: string; data?: Record<string, unknown> };

interface Pending {
  resolve(v: unknown): void;
  reject(e: Error): void;
  command: string;
}

export class QmpClient {
  private buf = '';
  private readonly queue: Pending[] = [];
  private closedError: Error | undefined;

  private constructor(
    private readonly sock: Socket,
    private readonly onEvent: (e: QmpEvent) => void,
  ) {
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => this.read(d));
    sock.on('error', () => undefined); // 'close' follows and rejects what is pending
    sock.on('close', () => {
      this.closedError = new Error('the VM closed its QMP socket');
      for (const p of this.queue.splice(0)) p.reject(new Error(`QMP ${p.command}: ${this.closedError.message}`));
    });
  }

  /** Connects (the socket appears once QEMU has started), reads the greeting, enters command mode. */
  static async connect(path: string, onEvent: (e: QmpEvent) => void = () => {}, timeoutMs = 30_000): Promise<QmpClient> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      try {
        const sock = await new Promise<Socket>((resolve, reject) => {
          const s = connect(path);
          s.once('connect', () => resolve(s));
          s.once('error', reject);
        });
        const c = new QmpClient(sock, onEvent);
        // The greeting comes first and is answered like a command with no request.
        await new Promise<unknown>((resolve, reject) => c.queue.push({ resolve, reject, command: 'greeting' }));
        await c.execute('qmp_capabilities');
        return c;
      } catch (e) {
        if (Date.now() > until) throw new Error(`QMP socket ${path}: ${(e as Error).message}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  execute<T = unknown>(command: string, args?: Record<string, unknown>): Promise<T> {
    if (this.closedError) return Promise.reject(new Error(`QMP ${command}: ${this.closedError.message}`));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ resolve: resolve as (v: unknown) => void, reject, command });
      this.sock.write(`${JSON.stringify(args ? { execute: command, arguments: args } : { execute: command })}\n`);
    });
  }

  private read(d: string): void {
    this.buf += d;
    for (let i = this.buf.indexOf('\n'); i >= 0; i = this.buf.indexOf('\n')) {
      const line = this.buf.slice(0, i).trim();
      this.buf = this.buf.slice(i + 1);
      if (!line) continue;
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (typeof msg.event === 'string') {
        this.onEvent({ event: msg.event, ...(msg.data ? { data: msg.data as Record<string, unknown> } : {}) });
        continue;
      }
      const p = this.queue.shift();
      if (!p) continue;
      if ('error' in msg) {
        const err = msg.error as { class?: string; desc?: string };
        p.reject(new Error(`QMP ${p.command}: ${err.desc ?? err.class ?? 'error'}`));
      } else p.resolve('QMP' in msg ? msg.QMP : msg.return);
    }
  }

  close(): void {
    this.sock.destroy();
  }
}
