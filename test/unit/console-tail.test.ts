// consoleTail: the last lines of a captured serial console as a failure message shows them:
// a firmware's screen codes and carriage returns gone, blank lines skipped, only the end read.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { consoleTail } from '../../src/util/console-tail.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();

describe('consoleTail', () => {
  it('returns the last lines, without terminal control sequences or blank lines', () => {
    const f = join(scratch('tsbm-console-'), 'console.log');
    writeFileSync(f, `${'old line\n'.repeat(50)}\x1b[2J\x1b[01;01HBdsDxe: failed to load Boot0001 "UEFI QEMU DVD-ROM QM00001 "\r\n\x1b[0m\x1b[30m\x1b[47m\n\n>>Start PXE over IPv4.`);
    expect(consoleTail(f, 2)).toEqual(['BdsDxe: failed to load Boot0001 "UEFI QEMU DVD-ROM QM00001 "', '>>Start PXE over IPv4.']);
    expect(consoleTail(f, 5)).toHaveLength(5);
  });

  it('reads only the end of a large file, and nothing of a missing one', () => {
    const f = join(scratch('tsbm-console-'), 'big.log');
    writeFileSync(f, `${'x'.repeat(1024 * 1024)}\nlast\n`);
    expect(consoleTail(f, 1)).toEqual(['last']);
    expect(consoleTail(join(f, '..', 'none.log'))).toEqual([]);
  });
});
