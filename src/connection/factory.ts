// The real ConnectionFactory: `local` specs get the controller, `ssh` specs a new SSH
// connection, connected (so an unreachable host fails here). The caller owns and closes what
// it gets: for a run that is the executor's pool (executor/connection-pool.ts), one per host.
import { localConnection } from './local.js';
import { openSsh, type SshOptions } from './ssh.js';
import type { ConnectionFactory } from './types.js';

export function connectionFactory(opts: SshOptions = {}): ConnectionFactory {
  return async (spec, o) => {
    if (spec.connection === 'local') return localConnection(spec.host);
    return openSsh(spec, { ...opts, ...(o?.signal ? { signal: o.signal } : {}) });
  };
}
