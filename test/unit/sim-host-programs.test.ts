// The lab's check of the machine programs its nodes' commands run (a POSIX /bin/sh and
// coreutils): every missing one named in one line, with how to install it.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { COREUTILS, hostProgramsError, missingHostPrograms } from '../../packages/lab/src/lab/host-programs.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tsbm-host-programs-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function bin(name: string, programs: readonly string[]): string {
  const d = join(dir, name);
  mkdirSync(d);
  for (const p of programs) {
    writeFileSync(join(d, p), '#!/bin/sh\n');
    chmodSync(join(d, p), 0o755);
  }
  return d;
}

describe('the programs a simulated node runs on this machine', () => {
  it('this machine has them all', () => {
    expect(missingHostPrograms()).toEqual([]);
  });

  it('names every missing one, /bin/sh first, and says how to install them', () => {
    const some = bin('some', COREUTILS.filter((p) => p !== 'mkfifo' && p !== 'tee'));
    const noSh = bin('nosh', []);
    const missing = missingHostPrograms([some], noSh);
    expect(missing).toEqual(['/bin/sh', 'mkfifo', 'tee']);
    const e = hostProgramsError(missing)!;
    expect(e.kind).toBe('runtime');
    expect(e.message).toBe("the simulated lab runs its nodes' commands with this machine's programs, and /bin/sh, mkfifo, tee are missing");
    expect(e.hint).toBe('install a POSIX shell as /bin/sh and GNU coreutils; on Debian and Ubuntu: apt-get install dash coreutils');
    expect(hostProgramsError(['dd'])!.message).toMatch(/and dd is missing$/);
    expect(hostProgramsError(['dd'])!.hint).toBe('install GNU coreutils; on Debian and Ubuntu: apt-get install coreutils');
  });

  it('all present in the directories given: nothing to say', () => {
    const all = bin('all', [...COREUTILS, 'sh']);
    expect(missingHostPrograms([all], all)).toEqual([]);
    expect(hostProgramsError([])).toBeUndefined();
  });
});
