// The default ConnectionFactory: `local` specs get the controller, `ssh` specs a pooled
// SSH connection. Returned connections are shared: callers must not close them; closeAll() does.
import { localConnection } from './local.js';
import { SshPool } from './pool.js';
import { openSsh, type SshOptions } from './ssh.js';
import type { Connection, ConnectionFactory, ConnectionSpec } from './types.js';

export interface PooledFactory {
  factory: ConnectionFactory;
  /** A fresh, unpooled attempt (wait_for_connection, reboots): the caller closes it. */
  fresh(spec: ConnectionSpec, opts?: { signal?: AbortSignal }): Promise<Connection>;
  closeAll(): Promise<void>;
}

export function createConnectionFactory(opts: SshOptions = {}): PooledFactory {
  const pool = new SshPool(opts);
  const locals = new Map<string, Connection>();
  const shared = (c: Connection): Connection => ({
    host: c.host,
    exec: (a, o) => c.exec(a, o),
    execShell: (a, o) => c.execShell(a, o),
    put: (d, p, o) => c.put(d, p, o),
    get: (p, o) => c.get(p, o),
    // Pooled: closing one user's handle must not cut the others off.
    close: async () => {},
  });
  return {
    factory: async (spec, o) => {
      if (spec.connection === 'local') {
        let c = locals.get(spec.host);
        if (!c) {
          c = localConnection(spec.host);
          locals.set(spec.host, c);
        }
        return c;
      }
      return shared(await pool.get(spec, o?.signal));
    },
    async fresh(spec, o) {
      if (spec.connection === 'local') return localConnection(spec.host);
      return openSsh(spec, { ...opts, ...(o?.signal ? { signal: o.signal } : {}) });
    },
    closeAll: () => pool.closeAll(),
  };
}

