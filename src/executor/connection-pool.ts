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

  constructor(private readonly factory: ConnectionFactory) {}

  get(spec: ConnectionSpec, signal?: AbortSignal): Promise<Connection> {
    const key = `${spec.connection}:${spec.host}`;
    let p = this.conns.get(key);
    if (!p) {
      p = this.factory(spec, signal ? { signal } : {});
      this.conns.set(key, p);
      p.catch(() => {
        if (this.conns.get(key) === p) this.conns.delete(key);
      });
    }
    return p;
  }

  /** Forget a host's connection (after it failed as unreachable). */
  drop(spec: ConnectionSpec): void {
    const key = `${spec.connection}:${spec.host}`;
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
