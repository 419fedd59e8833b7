// A lock file per cached image, so two tsbm runs on one controller download an image once. The
// lock-file mechanism is the node locks' (util/lock-file.ts): the owner's pid and process start
// time, so a lock left by a dead run (or one whose pid was reused since) is taken over.
import { rmSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { ownerHere, takeLock, writeOwnerRecord } from '../util/lock-file.js';
import { sleep } from '../util/wait.js';

/** Takes the lock now, or says it is held by a live process (of this run: a same-pid holder is one too). */
function tryLock(path: string): boolean {
  const me = writeOwnerRecord(dirname(path), ownerHere('image-cache'));
  try {
    const holder = takeLock(path, me);
    // Inside one run the in-process promise map shares downloads, so a lock held by this very
    // process is a leftover (an aborted download): take it.
    if (holder?.pid === process.pid && holder.machine === me.owner.machine) {
      unlinkSync(path);
      return takeLock(path, me) === undefined;
    }
    return holder === undefined;
  } finally {
    rmSync(me.file, { force: true });
  }
}

/**
 * Waits for the lock, checking `done()` between tries: when another process finished the
 * work meanwhile, returns undefined without locking. Else returns the release function.
 */
export async function acquireLock(
  path: string,
  done: () => Promise<boolean>,
  signal?: AbortSignal,
  onWait?: () => void,
): Promise<(() => Promise<void>) | undefined> {
  let waited = false;
  for (;;) {
    if (await done()) return undefined;
    if (tryLock(path)) {
      return async () => {
        rmSync(path, { force: true });
      };
    }
    if (!waited) onWait?.();
    waited = true;
    await sleep(500, signal);
  }
}
