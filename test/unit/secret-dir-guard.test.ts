// onlyInFreshDir: the write of a pull secret in the same batch as the step that makes its
// directory runs only into what that step leaves (real directory, 0700, ours, empty), under
// the shells a ramdisk may have.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { quoteArgv } from '../../src/util/shell-quote.js';
import { onlyInFreshDir } from '../../src/modules/bootc/secret-dir.js';

const shells = ['/bin/dash', '/bin/bash', '/bin/busybox'].filter((s) => existsSync(s));
let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

describe.each(shells)('onlyInFreshDir under %s', (shell) => {
  const run = (argv: string[]) => spawnSync(shell, [...(shell.endsWith('busybox') ? ['sh'] : []), '-c', quoteArgv(argv)], { encoding: 'utf8' });
  const touchIn = (d: string) => onlyInFreshDir(d, ['touch', join(d, 'auth.json')]);

  it('runs the command in a fresh private directory', () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-fresh-'));
    const d = join(dir, 'secret');
    mkdirSync(d, { mode: 0o700 });
    expect(run(touchIn(d)).status).toBe(0);
    expect(existsSync(join(d, 'auth.json'))).toBe(true);
  });

  it('refuses a directory with files in it, a loose mode, a symlink or nothing at all', () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-fresh-'));
    const full = join(dir, 'full');
    mkdirSync(full, { mode: 0o700 });
    writeFileSync(join(full, '.hidden'), 'x');
    const loose = join(dir, 'loose');
    mkdirSync(loose);
    chmodSync(loose, 0o755);
    const real = join(dir, 'real');
    mkdirSync(real, { mode: 0o700 });
    const link = join(dir, 'link');
    symlinkSync(real, link);
    for (const d of [full, loose, link, join(dir, 'missing')]) {
      const r = run(touchIn(d));
      expect(r.status, d).toBe(125);
      expect(r.stderr).toContain('is not the fresh private directory tsbm made: nothing written');
    }
    expect(existsSync(join(real, 'auth.json'))).toBe(false);
    expect(existsSync(join(loose, 'auth.json'))).toBe(false);
  });
});
