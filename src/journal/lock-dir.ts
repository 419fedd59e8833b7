// Where node locks live. Locks guard nodes, not working directories: the default store is one
// per controller (per user, or the system's when root), so two runs started from different
// directories still see each other. Controllers that share nodes share a directory on a shared
// file system through --lock-dir or TSBM_LOCK_DIR.
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/** The system-wide store used when tsbm runs as root. */
export const SYSTEM_LOCK_DIR = '/var/lib/tsbm/locks';

export interface LockDirEnv {
  env: NodeJS.ProcessEnv;
  uid: number | undefined;
  home: string;
}

const here = (): LockDirEnv => ({ env: process.env, uid: process.getuid?.(), home: homedir() });

/**
 * `--lock-dir` when given, else $TSBM_LOCK_DIR, else /var/lib/tsbm/locks for root, else
 * $XDG_STATE_HOME/tsbm/locks (a relative XDG_STATE_HOME is ignored, as the XDG spec says),
 * else ~/.local/state/tsbm/locks.
 */
export function lockDirFor(flag: string | undefined, where: LockDirEnv = here()): string {
  const given = flag?.trim() || where.env.TSBM_LOCK_DIR?.trim();
  if (given) return given;
  if (where.uid === 0) return SYSTEM_LOCK_DIR;
  const xdg = where.env.XDG_STATE_HOME?.trim();
  const state = xdg && isAbsolute(xdg) ? xdg : join(where.home, '.local', 'state');
  return join(state, 'tsbm', 'locks');
}
