// Loop-device disks for e2e tests. Every device is detached again (detachAll in afterAll),
// at most a few per test file, and the write helpers refuse any device this file did not
// attach: the machine's own disk is visible from the test namespaces.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sh } from './run.js';

const MAX_LOOPS_PER_FILE = 10;
const attached = new Map<string, string>(); // device -> backing file
let dir: string | undefined;

export interface LoopDisk {
  device: string;
  file: string;
  sizeBytes: number;
}

/** `sectorSize` 4096 makes a 4Kn disk (losetup -b): its tables count 4096-byte sectors. */
export function createLoopDisk(sizeBytes: number, opts: { sectorSize?: 512 | 4096 } = {}): LoopDisk {
  if (attached.size >= MAX_LOOPS_PER_FILE)
    throw new Error(`lab: more than ${MAX_LOOPS_PER_FILE} loop disks in one test file`);
  dir ??= mkdtempSync(join(tmpdir(), 'tsbm-loop-'));
  const file = join(dir, `disk${attached.size}-${process.pid}.img`);
  sh(['truncate', '-s', String(sizeBytes), file]);
  const block = opts.sectorSize ? ['-b', String(opts.sectorSize)] : [];
  const device = sh(['losetup', '-f', '--show', ...block, file]).stdout.trim();
  if (!/^\/dev\/loop\d+$/.test(device)) throw new Error(`lab: losetup gave "${device}"`);
  attached.set(device, file);
  return { device, file, sizeBytes };
}

/** Throws unless `device` is a loop device attached by this process to its own backing file. */
export function assertOwnLoop(device: string): void {
  const file = attached.get(device);
  if (!file) throw new Error(`lab: refusing to touch ${device}: not a loop device this test attached`);
  const back = sh(['losetup', '-n', '-O', 'BACK-FILE', device], { allowFail: true }).stdout.trim();
  if (back !== file)
    throw new Error(`lab: refusing to touch ${device}: its backing file is "${back}", not ${file}`);
}

/** Writes a partition table with sgdisk, only on an own loop device. */
export function sgdiskOwn(device: string, args: string[]): string {
  assertOwnLoop(device);
  return sh(['sgdisk', ...args, device]).stdout;
}

/** Reads `length` bytes at `offset` of an own loop device (by offset: no partition nodes here). */
export function readAt(device: string, offset: number, length: number): Buffer {
  assertOwnLoop(device);
  const out = join(dir!, `read-${process.pid}-${offset}.bin`);
  sh([
    'dd',
    `if=${device}`,
    `of=${out}`,
    'bs=1M',
    'iflag=skip_bytes,count_bytes',
    `skip=${offset}`,
    `count=${length}`,
    'status=none',
  ]);
  const data = readFileSync(out);
  rmSync(out, { force: true });
  return data;
}

/** Detaches `device`, trying again for about a second while it is busy (udev probing a new table). */
function detach(device: string): boolean {
  for (let i = 0; i < 10; i++) {
    if (sh(['losetup', '-d', device], { allowFail: true }).rc === 0) return true;
    sh(['sleep', '0.1']);
  }
  return false;
}

/** Detaches every device this file attached; one that stays attached fails the caller, loudly. */
export function detachAll(): void {
  const left = [...attached.keys()].filter((device) => !detach(device));
  attached.clear();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
  if (left.length) throw new Error(`lab: could not detach ${left.join(', ')}; detach with losetup -d`);
}

// A test process that ends without its afterAll (a crash, a worker torn down) still lets go.
process.once('exit', () => {
  for (const device of attached.keys()) sh(['losetup', '-d', device], { allowFail: true });
});
