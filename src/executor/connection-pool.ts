// The run's connections: one per host (per `connection:host`), opened by the factory on first
// use and owned here: closed when replaced, dropped or at the end of the run. This is the only
// layer between the executor and a transport (an SshConnection wraps its ssh2 client itself).
// A connection that proved unreachable is dropped so a later task may try again; one that
// re-establishes itself on next use (SSH) is kept, and only counts as not open until then.
import type { Connection, ConnectionFactory, ConnectionSpec } from '../connection/types.js';

export const LOCALHOST = 'localhost';

export function localSpec(): ConnectionSpec {
  return {
    host: LOCALHOST,
    connection: 'local',
    address: '127.0.0.1',
    port: 0,
    user: process.env.USER ?? '',
    hostKeyChecking: 'off',
    connectTimeoutMs: 10_000,
  };
}

const keyOf = (spec: ConnectionSpec): string => `${spec.connection}:${spec.host}`;

export class ConnectionPool {
  private readonly conns = new Map<string, Promise<Connection>>();
  /** The connections that opened, by key (those still in `conns`). */
  private readonly live = new Map<string, Connection>();
  private readonly open = new Set<string>();

  constructor(private readonly factory: ConnectionFactory) {}

  get(spec: ConnectionSpec, signal?: AbortSignal): Promise<Connection> {
    const key = keyOf(spec);
    const have = this.conns.get(key);
    if (have) {
      // A kept connection in use again after a drop.
      if (!this.open.has(key) && this.live.has(key)) this.open.add(key);
      return have;
    }
    const p = this.factory(spec, signal ? { signal } : {});
    this.conns.set(key, p);
    p.then(
      (c) => {
        if (this.conns.get(key) !== p) return;
        this.live.set(key, c);
        this.open.add(key);
      },
      () => {
        if (this.conns.get(key) === p) this.conns.delete(key);
      },
    );
    return p;
  }

  /** Makes an already open connection this target's pooled one; a previous one is closed. */
  adopt(spec: ConnectionSpec, conn: Connection): void {
    const key = keyOf(spec);
    const old = this.conns.get(key);
    this.conns.set(key, Promise.resolve(conn));
    this.live.set(key, conn);
    this.open.add(key);
    if (old) old.then((c) => (c === conn ? undefined : c.close())).catch(() => {});
  }

  /** True when a connection to this target is established (so a failure means it dropped). */
  isOpen(spec: ConnectionSpec): boolean {
    return this.open.has(keyOf(spec));
  }

  /** After a host proved unreachable: the next task reconnects. */
  drop(spec: ConnectionSpec): void {
    const key = keyOf(spec);
    this.open.delete(key);
    if (this.live.get(key)?.redials) return; // it redials on its next use
    this.live.delete(key);
    const old = this.conns.get(key);
    this.conns.delete(key);
    if (old) old.then((c) => c.close()).catch(() => {});
  }

  async closeAll(): Promise<void> {
    const all = [...this.conns.values()];
    this.conns.clear();
    this.live.clear();
    await Promise.all(all.map((p) => p.then((c) => c.close()).catch(() => {})));
  }
}
