// The simulated ramdisk puts its node directories into shell text: sandboxCommand rewrites
// /proc/meminfo to <root>/proc/meminfo inside the command line, and the tools source node.env.
// A lab directory with a space or a shell character (a checkout under "My Projects") would
// split or break those words, so the nodes then live under a plain-named symlink to it.
import { createHash } from 'node:crypto';
import { lstatSync, readlinkSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isPlainShellWord } from 'tsbm/lib/util/shell-quote.js';
import { TsbmError } from 'tsbm/lib/errors.js';

export interface NodeDir {
  /** The directory the nodes' files are reached through (the lab directory or its alias). */
  path: string;
  /** Removes the alias, if one was made. */
  release(): void;
}

/**
 * `dir` itself when it is a plain path; else a symlink to it in the temp directory, named for
 * the user and the directory so two labs never share one. An existing name is taken over
 * only if it is this user's own symlink (never follow someone else's link in /tmp).
 */
export function nodeDirFor(dir: string, tmp = tmpdir()): NodeDir {
  if (isPlainShellWord(dir)) return { path: dir, release: () => undefined };
  const uid = process.getuid?.() ?? 0;
  const alias = join(tmp, `tsbm-sim-${uid}-${createHash('sha256').update(dir).digest('hex').slice(0, 16)}`);
  if (!isPlainShellWord(alias)) {
    throw new TsbmError('options', `the lab directory ${dir} holds characters a shell would split, and so does the temp directory ${tmp}`, {
      hint: 'use --dir with a path of letters, digits and ._-/ only, or set TMPDIR to such a directory',
    });
  }
  const ours = (): boolean => {
    try {
      const st = lstatSync(alias);
      return st.isSymbolicLink() && st.uid === uid && readlinkSync(alias) === dir;
    } catch {
      return false;
    }
  };
  if (!ours()) {
    const st = lstatSync(alias, { throwIfNoEntry: false });
    // A link of ours to another directory (left over): replace it. Anything else: refuse.
    if (st && (!st.isSymbolicLink() || st.uid !== uid)) throw aliasTaken(alias, dir);
    if (st) unlinkSync(alias);
    symlinkSync(dir, alias);
    if (!ours()) throw aliasTaken(alias, dir);
  }
  return {
    path: alias,
    release: () => {
      if (ours()) unlinkSync(alias);
    },
  };
}

function aliasTaken(alias: string, dir: string): TsbmError {
  return new TsbmError('options', `cannot alias the lab directory ${dir}: ${alias} exists and is not this user's link to it`, {
    hint: `remove ${alias}, or use --dir with a path of letters, digits and ._-/ only`,
  });
}
