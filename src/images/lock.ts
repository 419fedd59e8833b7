// A lock file per cached image, so two tsbm runs on one controller download an image once:
// created with O_EXCL, holding the owner's pid; a lock whose process is gone is taken over.
import { open, readFile, unlink } from 'node:fs/promises';
import { sleep } from '../util/wait.js';
import { processAlive } from '../util/process-alive.js';


async function tryLock(path: string): Promise<boolean> {
  try {
    const fh = await open(path, 'wx', 0o600);
    await fh.writeFile(String(process.pid));
    await fh.close();
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    const pid = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    // Another process of this run or a dead one: stale (a same-pid lock is never legitimately
    // held here, the in-process promise map shares downloads inside one run).
    if (!pid || pid === process.pid || !processAlive(pid)) {
      await unlink(path).catch(() => undefined);
      return tryLock(path);
    }
    return false;
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
    if (await tryLock(path)) return () => unlink(path).catch(() => undefined);
    if (!waited) onWait?.();
    waited = true;
    await sleep(500, signal);
  }
}
