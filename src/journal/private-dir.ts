// Directories tsbm keeps run state in (journals, node locks): 0700, owned by the user running
// tsbm. Another user who can write there could delete a lock (and let two runs drive one node)
// or read and plant journal records. A new directory is created 0700; an existing one that
// is ours but open to others is tightened; one owned by someone else is refused.
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { TsbmError } from '../errors.js';

const PRIVATE_DIR_MODE = 0o700;

// What to do when a directory cannot be made. Never "--no-journal" for locks: that only hides
// the journal, and node locks are what keep two runs off one node.
const HINTS: Record<string, string> = {
  'node lock directory': 'set --lock-dir or TSBM_LOCK_DIR to a directory this user can create',
  'run journal directory': 'point --journal-dir at a directory this user can create',
  'node record directory': 'set --state files:DIR (or --lock-dir, TSBM_LOCK_DIR) to a directory this user can create',
};

/** Makes `dir` (and missing parents) 0700, or throws naming the directory and what to do. */
export function ensurePrivateDir(dir: string, what: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new TsbmError('runtime', `cannot create the ${what} ${dir} (${code})`, { hint: HINTS[what] ?? 'choose a directory this user can create' });
  }
  const st = statSync(dir);
  if (!st.isDirectory()) {
    throw new TsbmError('runtime', `the ${what} ${dir} is not a directory`, { hint: 'remove it or point tsbm elsewhere' });
  }
  const uid = process.getuid?.();
  if (uid === undefined) return; // not POSIX: no owner or mode to check
  if (st.uid !== uid) {
    throw new TsbmError('runtime', `the ${what} ${dir} belongs to uid ${st.uid}, not to the user running tsbm (uid ${uid})`, {
      hint: `tsbm keeps run state only in a directory its user owns (mode 0700): chown it, or choose another directory`,
    });
  }
  if ((st.mode & 0o077) !== 0) chmodSync(dir, PRIVATE_DIR_MODE);
}
