// One Connection per host per run, opened on first use and closed at the end of the run.
// A connection that proved unreachable is dropped so a later task may try again.
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

export class ConnectionPool {
  private readonly conns = new Map<string, Promise<Connection>>();
  private readonly open = new Set<string>();

  constructor(private readonly factory: ConnectionFactory) {}

  get(spec: ConnectionSpec, signal?: AbortSignal): Promise<Connection> {
    const key = `${spec.connection}:${spec.host}`;
    let p = this.conns.get(key);
    if (!p) {
      p = this.factory(spec, signal ? { signal } : {});
      this.conns.set(key, p);
      p.then(
        () => this.open.add(key),
        () => {
          if (this.conns.get(key) === p) this.conns.delete(key);
        },
      );
    }
    return p;
  }

  /** Makes an already open connection this target's pooled one; a previous one is closed. */
  adopt(spec: ConnectionSpec, conn: Connection): void {
    const key = `${spec.connection}:${spec.host}`;
    const old = this.conns.get(key);
    this.conns.set(key, Promise.resolve(conn));
    this.open.add(key);
    if (old) old.then((c) => (c === conn ? undefined : c.close())).catch(() => {});
  }

  /** True when a connection to this target is established (so a failure means it dropped). */
  isOpen(spec: ConnectionSpec): boolean {
    return this.open.has(`${spec.connection}:${spec.host}`);
  }

  /** Forget a host's connection (after it failed as unreachable). */
  drop(spec: ConnectionSpec): void {
    const key = `${spec.connection}:${spec.host}`;
    this.open.delete(key);
    const old = this.conns.get(key);
    this.conns.delete(key);
    if (old) old.then((c) => c.close()).catch(() => {});
  }

  async closeAll(): Promise<void> {
    const all = [...this.conns.values()];
    this.conns.clear();
    await Promise.all(all.map((p) => p.then((c) => c.close()).catch(() => {})));
  }
}
