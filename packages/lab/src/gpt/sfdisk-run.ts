// The sfdisk stand-in the simulated ramdisk runs where the machine has no util-linux sfdisk
// (Debian's fdisk package): `sfdisk --json DEV` and a GPT script on stdin, fresh (`label: gpt`)
// or `--append`ed, with the options tsbm and the lab pass. It edits disk image files only, and
// names anything else it is asked for as not implemented. Messages, exit codes and the JSON
// follow util-linux 2.38's sfdisk.
import { closeSync, readSync, statSync } from 'node:fs';
import { type LoadedDisk, loadTable, openDisk, writeTable, zapGpt } from './disk-file.js';
import { isGuid, randomGuid } from './guid.js';
import { partitionNode, sfdiskJson } from './sfdisk-json.js';
import { placePartition } from './sfdisk-place.js';
import { type PartitionSpec, parseScript, ScriptError, type SfdiskScript } from './sfdisk-script.js';
import { gptTypeFor, parseAttrs, typeName } from './sfdisk-types.js';
import { ENTRY_COUNT, type GptTable, newTable, SECTOR } from './table.js';

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

const INSTALL = "install util-linux's sfdisk (Debian and Ubuntu: apt-get install fdisk) for the full tool";

export const notImplemented = (tool: string, what: string, install: string): ToolResult => ({
  code: 1,
  stdout: '',
  stderr: `${tool} (tsbm simulated-lab stand-in): ${what} is not implemented; ${install}\n`,
});

interface Options {
  json: boolean;
  append: boolean;
  quiet: boolean;
  label?: string;
  device?: string;
}

const IGNORED = new Set(['--no-reread', '--no-tell-kernel']);
const WIPE = new Set(['-w', '--wipe', '-W', '--wipe-partitions']);

function parseArgs(argv: string[]): Options | ToolResult {
  const o: Options = { json: false, append: false, quiet: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.startsWith('--') ? (a.split(/=(.*)/s, 2) as [string, string | undefined]) : [a, undefined];
    if (flag === '-J' || flag === '--json') o.json = true;
    else if (flag === '-a' || flag === '--append') o.append = true;
    else if (flag === '-q' || flag === '--quiet') o.quiet = true;
    else if (IGNORED.has(flag)) continue;
    else if (WIPE.has(flag)) {
      // never and auto leave the new partitions' contents alone in a script run; always wipes
      // signatures inside them, which the stand-in cannot find.
      const mode = inline ?? argv[++i];
      if (mode !== 'never' && mode !== 'auto') return notImplemented('sfdisk', `${flag} ${mode ?? ''}`.trim(), INSTALL);
    } else if (flag === '-X' || flag === '--label') o.label = inline ?? argv[++i];
    else if (a.startsWith('-') && a !== '-') return notImplemented('sfdisk', `option ${a}`, INSTALL);
    else if (o.device === undefined) o.device = a;
    else return notImplemented('sfdisk', 'more than one device or a partition number argument', INSTALL);
  }
  return o;
}

/** Sector 0 holds an MBR with a partition other than GPT's protective one. */
function hasDosTable(fd: number): boolean {
  const b = Buffer.alloc(SECTOR);
  readSync(fd, b, 0, SECTOR, 0);
  if (b[510] !== 0x55 || b[511] !== 0xaa) return false;
  for (let p = 0; p < 4; p++) {
    const type = b[446 + p * 16 + 4];
    if (type !== 0 && type !== 0xee) return true;
  }
  return false;
}

export function errnoText(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'No such file or directory';
  if (code === 'EACCES') return 'Permission denied';
  return (e as Error).message;
}

const ERRNO = { ERANGE: 'Numerical result out of range', EINVAL: 'Invalid argument', ENOSPC: 'No space left on device' };

/** Sizes as sfdisk's messages print them: `64 MiB`, `19.3 GiB`, `5 KiB`. */
export function humanSize(bytes: number, suffix = 'iB', space = ' '): string {
  const units = ['', 'K', 'M', 'G', 'T', 'P', 'E'];
  let i = 0;
  let v = bytes;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  if (i === 0) return `${bytes}${space}B`;
  const r = Math.round(v * 10) / 10;
  return `${Number.isInteger(r) ? r : r.toFixed(1)}${space}${units[i]}${suffix}`;
}

function newGpt(sectors: number, script: SfdiskScript): GptTable | string {
  const h = script.header;
  const t = newTable(sectors);
  t.firstUsable = 2048; // sfdisk's default first-lba: the 1 MiB grain
  const int = (k: string) => (h.has(k) ? Number(h.get(k)) : undefined);
  const first = int('first-lba');
  const last = int('last-lba');
  if (first !== undefined) t.firstUsable = first;
  if (last !== undefined) t.lastUsable = last;
  const id = h.get('label-id');
  if (id !== undefined) {
    if (!isGuid(id)) return `label-id ${id}`;
    t.diskGuid = id.toUpperCase();
  }
  for (const [k, v] of [['table-length', '128'], ['unit', 'sectors'], ['sector-size', '512'], ['grain', '1048576']] as const) {
    if (h.has(k) && h.get(k) !== v) return `${k}: ${h.get(k)}`;
  }
  if (!Number.isSafeInteger(t.firstUsable) || !Number.isSafeInteger(t.lastUsable) || t.firstUsable < 34 || t.lastUsable > sectors - 34 || t.firstUsable > t.lastUsable) {
    return `first-lba ${t.firstUsable} / last-lba ${t.lastUsable} on a disk of ${sectors} sectors`;
  }
  return t;
}

/** Adds one script line's partition to the table, or returns sfdisk's complaint. */
function addPartition(t: GptTable, spec: PartitionSpec, number: number): string[] | undefined {
  const fail = (lines: string[], errno: keyof typeof ERRNO) => [...lines, `Failed to add #${number} partition: ${ERRNO[errno]}`];
  if (number > ENTRY_COUNT) return fail([], 'ENOSPC');
  const type = spec.type === undefined ? gptTypeFor('L') : gptTypeFor(spec.type);
  if (!type) return fail([], 'EINVAL');
  const attributes = spec.attrs === undefined ? 0n : parseAttrs(spec.attrs);
  if (attributes === undefined) return [`line ${spec.line}: unsupported attrs "${spec.attrs}"`];
  if (spec.uuid !== undefined && !isGuid(spec.uuid)) return [`line ${spec.line}: unsupported uuid "${spec.uuid}"`];
  const placed = placePartition(t, spec);
  if ('errors' in placed) return fail(placed.errors, placed.errno);
  t.entries[number - 1] = {
    typeGuid: type,
    uniqueGuid: spec.uuid?.toUpperCase() ?? randomGuid(),
    firstLba: placed.first,
    lastLba: placed.last,
    attributes,
    name: spec.name ?? '',
  };
  return undefined;
}

function readScript(readStdin: () => string): SfdiskScript | ToolResult {
  try {
    return parseScript(readStdin());
  } catch (e) {
    if (e instanceof ScriptError) return { code: 1, stdout: '', stderr: `${e.message}\n` };
    throw e;
  }
}

export function runSfdisk(argv: string[], readStdin: () => string): ToolResult {
  const o = parseArgs(argv);
  if ('code' in o) return o;
  const device = o.device;
  if (device === undefined) return { code: 1, stdout: '', stderr: 'sfdisk: no disk device specified\n' };
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(device);
  } catch (e) {
    return { code: 1, stdout: '', stderr: `sfdisk: cannot open ${device}: ${errnoText(e)}\n` };
  }
  if (!st.isFile()) {
    return notImplemented('sfdisk', `${device}: editing anything but a disk image file`, INSTALL);
  }
  let disk: { fd: number; sectors: number };
  try {
    disk = openDisk(device, !o.json);
  } catch (e) {
    return { code: 1, stdout: '', stderr: `sfdisk: cannot open ${device}: ${errnoText(e)}\n` };
  }
  try {
    const loaded = loadTable(disk.fd, disk.sectors);
    const dos = loaded.source === 'none' && hasDosTable(disk.fd);
    if (o.json) return json(loaded, device, dos);
    const script = readScript(readStdin);
    if ('code' in script) return script;
    const label = o.label ?? script.header.get('label');
    if (label !== undefined && label !== 'gpt') return notImplemented('sfdisk', `label: ${label} (only gpt is)`, INSTALL);
    if (dos) return notImplemented('sfdisk', `changing ${device}'s MBR (dos) partition table`, INSTALL);
    return edit(disk, loaded, device, script, o, label === 'gpt');
  } finally {
    closeSync(disk.fd);
  }
}

function json(loaded: LoadedDisk, device: string, dos: boolean): ToolResult {
  if (loaded.source === 'none') {
    if (dos) return notImplemented('sfdisk', `reading ${device}'s MBR (dos) partition table`, INSTALL);
    return { code: 1, stdout: '', stderr: `sfdisk: ${device}: does not contain a recognized partition table\n` };
  }
  const warnings: string[] = [];
  if (loaded.source === 'backup') warnings.push('The primary GPT table is corrupt, but the backup appears OK, so that will be used.');
  if (loaded.table.backupLba !== loaded.table.sectors - 1) warnings.push('The backup GPT table is not on the end of the device.');
  return { code: 0, stdout: sfdiskJson(loaded.table, device), stderr: warnings.map((w) => `${w}\n`).join('') };
}

function edit(
  disk: { fd: number; sectors: number },
  loaded: LoadedDisk,
  device: string,
  script: SfdiskScript,
  o: Options,
  labelGiven: boolean,
): ToolResult {
  const out: string[] = [];
  let table: GptTable;
  const fresh = !o.append;
  if (fresh) {
    // Without `label:` sfdisk keeps the disk's label type: a GPT here (no table, or an MBR, is refused above or below).
    if (!labelGiven && loaded.source === 'none') {
      return notImplemented('sfdisk', `a script without "label: gpt" for ${device}, which has no partition table (sfdisk would write an MBR)`, INSTALL);
    }
    const t = newGpt(disk.sectors, script);
    if (typeof t === 'string') return notImplemented('sfdisk', `the script header ${t}`, INSTALL);
    table = t;
    out.push(`Created a new GPT disklabel (GUID: ${table.diskGuid}).`);
  } else {
    if (loaded.source === 'none') return notImplemented('sfdisk', `--append to ${device}, which has no GPT`, INSTALL);
    table = loaded.table;
  }
  for (const [i, spec] of script.partitions.entries()) {
    const number = fresh ? i + 1 : table.entries.indexOf(undefined) + 1 || ENTRY_COUNT + 1;
    const errs = addPartition(table, spec, number);
    if (errs) return { code: 1, stdout: o.quiet ? '' : `${out.join('\n')}\n`, stderr: `${errs.join('\n')}\n` };
    const e = table.entries[number - 1]!;
    out.push(
      `${partitionNode(device, number)}: Created a new partition ${number} of type '${typeName(e.typeGuid)}' and of size ${humanSize((e.lastLba - e.firstLba + 1) * SECTOR)}.`,
    );
  }
  // A new label replaces the old one's signatures: an old backup header short of the disk end too.
  if (fresh && loaded.source !== 'none') zapGpt(disk.fd, loaded.table, false);
  writeTable(disk.fd, table);
  let highest = 0;
  table.entries.forEach((e, i) => {
    if (e) highest = i + 1;
  });
  const next = partitionNode(device, highest + 1);
  out.push(`${next}: Done.`, '', 'The partition table has been altered.');
  return { code: 0, stdout: o.quiet ? '' : `Checking that no-one is using this disk right now ... OK\n\n${out.join('\n')}\n`, stderr: '' };
}
