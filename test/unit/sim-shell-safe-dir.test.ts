// The lab's node directories go into shell text on the simulated ramdisk; a lab directory with
// a space gets a plain-named symlink instead, and a link someone else planted is never used.
import { lstatSync, mkdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isPlainShellWord as isShellSafePath } from '../../src/util/shell-quote.js';
import { nodeDirFor } from '../../packages/lab/src/lab/shell-safe-dir.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratchDir = scratchDirs();
const scratch = () => scratchDir('tsbm-safe-dir-');

describe('nodeDirFor', () => {
  it('a plain path is used as it is, with nothing to release', () => {
    const d = scratch();
    const n = nodeDirFor(d);
    expect(n.path).toBe(d);
    n.release();
  });

  it('a path with a space or shell characters gets a plain-named link to it, removed on release', () => {
    const base = scratch();
    const links = join(base, 'links');
    mkdirSync(links);
    for (const name of ['my lab', "it's", 'a$b', 'x;y']) {
      const dir = join(base, name);
      mkdirSync(dir);
      expect(isShellSafePath(dir)).toBe(false);
      const n = nodeDirFor(dir, links);
      expect(isShellSafePath(n.path)).toBe(true);
      expect(readlinkSync(n.path)).toBe(dir);
      writeFileSync(join(n.path, 'probe'), 'x');
      expect(lstatSync(join(dir, 'probe')).isFile()).toBe(true);
      // The same directory gets the same link again (a restarted lab).
      expect(nodeDirFor(dir, links).path).toBe(n.path);
      n.release();
      expect(lstatSync(n.path, { throwIfNoEntry: false })).toBeUndefined();
    }
  });

  it('a stale link of ours is replaced; a file in its place is refused', () => {
    const base = scratch();
    const links = join(base, 'links');
    mkdirSync(links);
    const dir = join(base, 'my lab');
    mkdirSync(dir);
    const first = nodeDirFor(dir, links);
    rmSync(first.path);
    symlinkSync(join(base, 'elsewhere'), first.path);
    expect(readlinkSync(nodeDirFor(dir, links).path)).toBe(dir);
    rmSync(first.path);
    writeFileSync(first.path, 'not a link');
    expect(() => nodeDirFor(dir, links)).toThrow(/exists and is not this user's link to it/);
  });

  it('a temp directory that is not plain either is a clear error', () => {
    const base = scratch();
    const dir = join(base, 'my lab');
    expect(() => nodeDirFor(dir, join(base, 'tmp dir'))).toThrow(/and so does the temp directory/);
  });
});
