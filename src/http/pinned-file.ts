// A file as it was when tsbm published it: the path given, where it really is (symlinks
// resolved), and its device and inode. Every open checks all three, so a symlink re-pointed
// after publishing (or a file replaced under the same name) is refused rather than served.
import { constants, type Stats } from 'node:fs';
import { type FileHandle, open, realpath, stat } from 'node:fs/promises';

export interface PinnedFile {
  /** The absolute path published (may be a symlink). */
  path: string;
  /** Its real path at publish time. */
  real: string;
  dev: number;
  ino: number;
}

class NotAFileError extends Error {}

export async function pinFile(path: string): Promise<PinnedFile> {
  const real = await realpath(path);
  const st = await stat(real);
  if (!st.isFile()) throw new NotAFileError(`${path} is not a regular file`);
  return { path, real, dev: st.dev, ino: st.ino };
}

function same(pin: PinnedFile, st: Stats): boolean {
  return st.isFile() && st.dev === pin.dev && st.ino === pin.ino;
}

/** Whether the published path still leads to the pinned file. */
export async function stillPinned(pin: PinnedFile): Promise<boolean> {
  try {
    return (await realpath(pin.path)) === pin.real && same(pin, await stat(pin.real));
  } catch {
    return false;
  }
}

/**
 * The pinned file opened for reading, or undefined when the path no longer leads to it. The
 * real path is opened without following a final symlink, and the open file itself is checked.
 */
export async function openPinned(pin: PinnedFile): Promise<{ fd: FileHandle; st: Stats } | undefined> {
  let real: string;
  try {
    real = await realpath(pin.path);
  } catch {
    return undefined;
  }
  if (real !== pin.real) return undefined;
  let fd: FileHandle;
  try {
    fd = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  const st = await fd.stat().catch(() => undefined);
  if (!st || !same(pin, st)) {
    await fd.close();
    return undefined;
  }
  return { fd, st };
}
