// The partx stand-in the simulated ramdisk runs where the machine has no util-linux partx:
// `partx -P -o COLUMNS DEV` (the pairs tsbm reads tables with) and `partx -u DEV` (telling the
// kernel: a disk image file has no kernel partitions, so it only checks there is a table).
// Output and messages as util-linux 2.38's partx; anything else is named as not implemented.
import { closeSync, statSync } from 'node:fs';
import { loadTable, openDisk } from './disk-file.js';
import { errnoText, humanSize, notImplemented, type ToolResult } from './sfdisk-run.js';
import type { GptEntry } from './table.js';
import { SECTOR } from './table.js';

const INSTALL = "install util-linux's partx (Debian and Ubuntu: apt-get install util-linux) for the full tool";

type Column = (e: GptEntry, n: number) => string;

const COLUMNS: Record<string, Column> = {
  NR: (_e, n) => String(n),
  START: (e) => String(e.firstLba),
  END: (e) => String(e.lastLba),
  SECTORS: (e) => String(e.lastLba - e.firstLba + 1),
  SIZE: (e) => humanSize((e.lastLba - e.firstLba + 1) * SECTOR, '', ''),
  NAME: (e) => e.name,
  UUID: (e) => e.uniqueGuid.toLowerCase(),
  TYPE: (e) => e.typeGuid.toLowerCase(),
  FLAGS: (e) => `0x${e.attributes.toString(16)}`,
  SCHEME: () => 'gpt',
};

/** libsmartcols' pairs quoting: bytes that are not printable ASCII, and " \ ` $, as \xHH. */
function quote(v: string): string {
  let out = '';
  for (const b of Buffer.from(v, 'utf8')) {
    out += b < 0x20 || b >= 0x7f || b === 0x22 || b === 0x5c || b === 0x60 || b === 0x24 ? `\\x${b.toString(16).padStart(2, '0')}` : String.fromCharCode(b);
  }
  return `"${out}"`;
}

export function runPartx(argv: string[]): ToolResult {
  let mode: 'pairs' | 'update' | undefined;
  let columns: string[] | undefined;
  let device: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-P' || a === '--pairs') mode = 'pairs';
    else if (a === '-u' || a === '--update') mode = 'update';
    else if (a === '-g' || a === '--noheadings') continue;
    else if (a === '-o' || a === '--output') columns = argv[++i]?.split(',');
    else if (a.startsWith('--output=')) columns = a.slice(9).split(',');
    else if (a.startsWith('-o') && a.length > 2) columns = a.slice(2).split(',');
    else if (a.startsWith('-') && a !== '-') return notImplemented('partx', `option ${a}`, INSTALL);
    else if (device === undefined) device = a;
    else return notImplemented('partx', 'a partition range or a second device', INSTALL);
  }
  if (!mode) return notImplemented('partx', 'listing without -P (or any mode but -P and -u)', INSTALL);
  if (!device) return { code: 1, stdout: '', stderr: 'partx: no disk device specified\n' };
  const unknown = (columns ?? []).find((c) => !COLUMNS[c.toUpperCase()]);
  if (unknown !== undefined) return { code: 1, stdout: '', stderr: `partx: unknown column: ${unknown}\n` };
  try {
    if (!statSync(device).isFile()) return notImplemented('partx', `${device}: reading anything but a disk image file`, INSTALL);
  } catch (e) {
    return { code: 1, stdout: '', stderr: `partx: stat of ${device} failed: ${errnoText(e)}\n` };
  }
  let disk: { fd: number; sectors: number };
  try {
    disk = openDisk(device, false);
  } catch (e) {
    return { code: 1, stdout: '', stderr: `partx: cannot open ${device}: ${errnoText(e)}\n` };
  }
  try {
    const loaded = loadTable(disk.fd, disk.sectors);
    if (loaded.source === 'none') return { code: 1, stdout: '', stderr: `partx: ${device}: failed to read partition table\n` };
    if (mode === 'update') return { code: 0, stdout: '', stderr: '' };
    const cols = (columns ?? ['NR', 'START', 'END', 'SECTORS', 'SIZE', 'NAME', 'UUID']).map((c) => c.toUpperCase());
    const lines = loaded.table.entries.flatMap((e, i) =>
      e ? [cols.map((c) => `${c}=${quote(COLUMNS[c]!(e, i + 1))}`).join(' ')] : [],
    );
    return { code: 0, stdout: lines.map((l) => `${l}\n`).join(''), stderr: '' };
  } finally {
    closeSync(disk.fd);
  }
}
