// One SSH connection per (user, address, port, jump): every task on a host shares it.
import { openSsh, type SshConnection, type SshOptions } from './ssh.js';
import type { ConnectionSpec } from './types.js';

function poolKey(spec: ConnectionSpec): string {
  return `${spec.user}@${spec.address}:${spec.port}${spec.jump ? ` via ${spec.jump}` : ''}`;
}

export class SshPool {
  private readonly conns = new Map<string, Promise<SshConnection>>();

  constructor(private readonly opts: SshOptions = {}) {}

  /** The pooled connection; a failed connect is not cached, so the next call tries again. */
  get(spec: ConnectionSpec, signal?: AbortSignal): Promise<SshConnection> {
    const key = poolKey(spec);
    let p = this.conns.get(key);
    if (!p) {
      p = openSsh(spec, { ...this.opts, ...(signal ? { signal } : {}) });
      this.conns.set(key, p);
      p.catch(() => {
        if (this.conns.get(key) === p) this.conns.delete(key);
      });
    }
    return p;
  }

  /** Forgets and closes one host's connection (e.g. after a reboot). */
  async drop(spec: ConnectionSpec): Promise<void> {
    const key = poolKey(spec);
    const p = this.conns.get(key);
    this.conns.delete(key);
    await p?.then((c) => c.close()).catch(() => {});
  }

  get size(): number {
    return this.conns.size;
  }

  async closeAll(): Promise<void> {
    const all = [...this.conns.values()];
    this.conns.clear();
    await Promise.all(all.map((p) => p.then((c) => c.close()).catch(() => {})));
  }
}
