// sgdisk's behaviour for the options tsbm uses, on a disk image file: load (primary, backup,
// or "Creating new GPT entries in memory."), apply each option in order, then save unless an
// option failed. Messages, streams and exit codes follow sgdisk 1.0.9 (0 ok, 1 usage,
// 2 cannot open the disk, 4 an operation failed).
import { closeSync, openSync } from 'node:fs';
import { align, computeAlignment, firstInLargest, isFree, lastInFree, parseSectorValue } from './allocate.js';
import { loadTable, openDisk, writeTable, zapGpt } from './disk-file.js';
import { randomGuid } from './guid.js';
import { printTable } from './print.js';
import { parseSgdiskArgs, type SgdiskOp, UsageError } from './sgdisk-options.js';
import { ENTRY_COUNT, type GptTable, moveBackupToEnd, newTable } from './table.js';
import { DEFAULT_TYPE_GUID, typeGuidFor } from './type-codes.js';

export interface SgdiskResult {
  code: number;
  stdout: string;
  stderr: string;
}

const KERNEL_WARNING =
  'Warning: The kernel is still using the old partition table.\nThe new table will be used at the next reboot or after you\nrun partprobe(8) or kpartx(8)\n';

/** "N:REST" as sgdisk splits it: the partition number before the first colon, the rest after. */
function split(value: string): { num: number; rest: string } {
  const i = value.indexOf(':');
  const head = i < 0 ? value : value.slice(0, i);
  return { num: Number.parseInt(head, 10) || 0, rest: i < 0 ? '' : value.slice(i + 1) };
}

interface State {
  device: string;
  loadedFromDisk: boolean;
  table: GptTable;
  alignment: number;
  save: boolean;
  neverSave: boolean;
  out: string[];
  err: string[];
}

function newPartition(s: State, value: string): void {
  const t = s.table;
  const [numText = '', startText = '0', endText = '0'] = value.split(':');
  let index = (Number.parseInt(numText, 10) || 0) - 1;
  if (index < 0) index = t.entries.indexOf(undefined);
  const low = align(t, firstInLargest(t) ?? 0, s.alignment);
  const high = lastInFree(t, low);
  // Observed in gdisk 1.0.9: a START of +SIZE is low + SIZE from an aligned default start,
  // one less from an unaligned one. (When +SIZE runs past a free block followed by a partition,
  // gdisk sometimes reports one sector less; creation fails either way.)
  const inclusive = low % s.alignment !== 0;
  const start = parseSectorValue(startText, { dflt: low, base: low, high, inclusive });
  const end = parseSectorValue(endText, { dflt: high, base: start, high, inclusive: true });
  const fail = () => {
    s.err.push(`Could not create partition ${index + 1} from ${start} to ${end}\n`);
    s.neverSave = true;
  };
  // sgdisk checks the number first; only then does it align (and say so) and check the range.
  if (index < 0 || index >= ENTRY_COUNT || t.entries[index]) {
    fail();
    return;
  }
  const first = align(t, start, s.alignment);
  if (first !== start)
    s.out.push(
      `Information: Moved requested sector from ${start} to ${first} in\norder to align on ${s.alignment}-sector boundaries.\n`,
    );
  if (!isFree(t, first, end)) {
    fail();
    return;
  }
  t.entries[index] = {
    typeGuid: DEFAULT_TYPE_GUID,
    uniqueGuid: randomGuid(),
    firstLba: first,
    lastLba: end,
    attributes: 0n,
    name: '',
  };
  s.save = true;
}

function apply(s: State, op: SgdiskOp, fd: () => number): void {
  const t = s.table;
  switch (op.op) {
    case 'new':
      newPartition(s, op.value);
      return;
    case 'typecode': {
      const { num, rest } = split(op.value);
      const e = t.entries[num - 1];
      const guid = typeGuidFor(rest);
      if (!e || !guid) {
        s.err.push(`Could not change partition ${num}'s type code to ${rest}!\n`);
        s.neverSave = true;
        return;
      }
      e.typeGuid = guid;
      s.save = true;
      return;
    }
    case 'change-name': {
      const { num, rest } = split(op.value);
      const e = t.entries[num - 1];
      if (!e) {
        s.err.push(`Unable to set partition ${num}'s name to '${rest}'!\n`);
        s.neverSave = true;
        return;
      }
      e.name = rest;
      s.save = true;
      return;
    }
    case 'delete': {
      const { num } = split(op.value);
      // In range means between the lowest and highest partition numbers in use; an empty slot
      // between them deletes quietly (gdisk 1.0.9).
      const used = t.entries.flatMap((e, i) => (e ? [i + 1] : []));
      if (used.length === 0 || num < used[0]! || num > used[used.length - 1]!) {
        // sgdisk prints errno here: ENOTTY (25) left by its ioctls on a loaded disk file, else 0.
        s.err.push(
          `Partition number ${num} out of range!\nError ${s.loadedFromDisk ? 25 : 0} deleting partition!\n`,
        );
        s.neverSave = true;
        return;
      }
      t.entries[num - 1] = undefined;
      s.save = true;
      return;
    }
    case 'move-second-header':
      moveBackupToEnd(t);
      s.save = true;
      return;
    case 'zap':
    case 'zap-all':
      zapGpt(fd(), t, op.op === 'zap-all');
      s.out.push(
        KERNEL_WARNING,
        'GPT data structures destroyed! You may now partition the disk using fdisk or\nother utilities.\n',
      );
      s.table = newTable(t.sectors);
      s.save = false;
      return;
    case 'clear':
      s.table = newTable(t.sectors);
      s.save = true;
      return;
    case 'print':
      s.out.push(printTable(t, s.device, s.alignment));
      return;
  }
}

const STARS = '*'.repeat(76);
const BEL = '\x07'; // sgdisk rings the terminal bell before its cautions

/** What sgdisk says when it had to load the backup GPT (callers only see it; none parse it). */
function reportDamage(s: State, header: boolean): void {
  if (header)
    s.err.push(
      `${BEL}Caution: invalid main GPT header, but valid backup; regenerating main header\nfrom backup!\n\n`,
      `${BEL}Warning: Invalid CRC on main header data; loaded backup partition table.\n`,
    );
  else {
    s.out.push("Caution! After loading partitions, the CRC doesn't check out!\n");
    s.err.push(
      `${BEL}Warning! Main partition table CRC mismatch! Loaded backup partition table\ninstead of main partition table!\n\n`,
    );
  }
  s.err.push(
    `Warning! One or more CRCs don't match. You should repair the disk!\nMain header: ${header ? 'ERROR' : 'OK'}\nBackup header: OK\n`,
    `Main partition table: ${header ? 'OK' : 'ERROR'}\nBackup partition table: OK\n\n`,
  );
  s.out.push(
    `${BEL}${BEL}${STARS}\nCaution: Found protective or hybrid MBR and corrupt GPT. Using GPT, but disk\nverification and recovery are STRONGLY recommended.\n${STARS}\n`,
  );
}

export function runSgdisk(argv: string[]): SgdiskResult {
  let cmd: ReturnType<typeof parseSgdiskArgs>;
  try {
    cmd = parseSgdiskArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) return { code: 1, stdout: '', stderr: `${e.message}\n` };
    throw e;
  }
  if (!cmd.device) return { code: 0, stdout: '', stderr: 'Usage: sgdisk [OPTION...] <device>\n' };
  let disk: { fd: number; sectors: number };
  try {
    disk = openDisk(cmd.device, false);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const why = err.code === 'ENOENT' ? 'The specified file does not exist!\n' : `${err.message}\n`;
    return {
      code: 2,
      stdout: '',
      stderr: `Problem opening ${cmd.device} for reading! Error is ${-(err.errno ?? 0) || 0}.\n${why}`,
    };
  }
  const loaded = loadTable(disk.fd, disk.sectors);
  const s: State = {
    device: cmd.device,
    loadedFromDisk: loaded.source !== 'none',
    table: loaded.table,
    alignment: computeAlignment(loaded.table),
    save: false,
    neverSave: false,
    out: [],
    err: [],
  };
  if (loaded.source === 'none') s.out.push('Creating new GPT entries in memory.\n');
  if (loaded.source === 'backup') reportDamage(s, loaded.damaged === 'header');
  let wfd: number | undefined;
  const writable = (): number => {
    wfd ??= openSync(cmd.device!, 'r+');
    return wfd;
  };
  try {
    for (const op of cmd.ops) apply(s, op, writable);
    if (s.neverSave) {
      s.err.push('Error encountered; not saving changes.\n');
      return { code: 4, stdout: s.out.join(''), stderr: s.err.join('') };
    }
    if (s.save) {
      writeTable(writable(), s.table);
      s.out.push(KERNEL_WARNING, 'The operation has completed successfully.\n');
    }
    return { code: 0, stdout: s.out.join(''), stderr: s.err.join('') };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    s.err.push(
      `Unable to open device '${cmd.device}' for writing! Errno is ${-(err.errno ?? 0) || 0}! Aborting write!\n`,
    );
    return { code: 4, stdout: s.out.join(''), stderr: s.err.join('') };
  } finally {
    closeSync(disk.fd);
    if (wfd !== undefined) closeSync(wfd);
  }
}
