// configdrive_write's one round trip for a new partition: sfdisk --append, partx, then dd only
// when partx shows the partition where the plan put it, and the read-back. Run here with the
// real util-linux tools on a disk image file, through the real batch script (execSteps), the
// way a ramdisk runs them.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execSteps, type StepsOptions } from '../../src/connection/exec-steps.js';
import type { ExecOptions, ExecResult } from '../../src/connection/types.js';
import { parseSfdiskJson } from '../../src/configdrive/partition-table.js';
import { type Placement, placeConfigDrive } from '../../src/configdrive/placement.js';
import { createPartition } from '../../src/modules/configdrive/configdrive-partition.js';
import { createHash } from 'node:crypto';

const MiB = 1024 * 1024;
const have = (p: string) => spawnSync('sh', ['-c', `command -v ${p}`]).status === 0;
const tools = ['sfdisk', 'partx', 'dd', 'blockdev'].every(have);

/** Runs a script with sh, stdin as given: the shape of a connection's execShell. */
function execShell(script: string, opts: ExecOptions = {}): Promise<ExecResult> {
  return new Promise((resolve) => {
    const p = spawn('sh', ['-c', script], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    p.stdout.on('data', (d: Buffer) => out.push(d));
    p.stderr.on('data', (d: Buffer) => err.push(d));
    p.on('close', (rc) =>
      resolve({ rc: rc ?? 255, stdout: Buffer.concat(out).toString(opts.stdoutEncoding ?? 'utf8'), stderr: Buffer.concat(err).toString() }),
    );
    p.stdin.on('error', () => {});
    const input = opts.stdin;
    p.stdin.end(typeof input === 'string' || Buffer.isBuffer(input) ? input : undefined);
  });
}

let dir = '';
let disk = '';
const batches: string[] = [];
const ctx = {
  host: 'node1',
  task: 'Write the config drive',
  exec: (argv: readonly string[], opts?: ExecOptions) => execSteps({ execShell }, [argv], opts).then((r) => r[0] as ExecResult),
  execSteps: (steps: readonly (readonly string[])[], opts?: StepsOptions) => {
    batches.push(steps.map((s) => s.join(' ')).join(' ; '));
    return execSteps({ execShell }, steps, opts);
  },
};

function planFor(path: string): Extract<Placement, { action: 'create' }> {
  const table = parseSfdiskJson(spawnSync('sfdisk', ['--json', path], { encoding: 'utf8' }).stdout, path);
  const p = placeConfigDrive(path, table, [], 128 * MiB, 64 * 1024);
  if (p.action !== 'create') throw new Error('expected a create plan');
  return p;
}

const bytesAt = (offset: number, length: number) => readFileSync(disk).subarray(offset, offset + length);

describe.skipIf(!tools)('config drive partition and write in one round trip (real sfdisk, partx, dd)', () => {
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-cdwrite-'));
    disk = join(dir, 'disk.img');
    writeFileSync(disk, '');
    truncateSync(disk, 128 * MiB);
    // An ESP and a root, as bootc leaves a disk, with room at the end for the config drive.
    const made = spawnSync('sfdisk', ['-q', disk], {
      input: 'label: gpt\nsize=8MiB, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B\nsize=20MiB, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709\n',
    });
    expect(made.status).toBe(0);
    batches.length = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates partition 3, writes the data at its start and reads it back, all in one batch', async () => {
    const plan = planFor(disk);
    const data = Buffer.from(Array.from({ length: 64 * 1024 }, (_v, i) => (i * 7 + 3) % 256));
    const r = await createPartition(ctx, disk, plan, data);
    expect(batches).toHaveLength(1);
    expect(r.extent).toMatchObject({ number: 3, offsetBytes: plan.offsetBytes, name: 'config-2' });
    expect(r.readBack).toBe(createHash('sha256').update(data).digest('hex'));
    expect(bytesAt(plan.offsetBytes, data.length).equals(data)).toBe(true);
  });

  it('a partition 3 already elsewhere: the batch writes nothing at the planned offset and the error says where it is', async () => {
    const plan = planFor(disk);
    // Someone else's partition 3, 1 MiB before the planned start: sfdisk --append adds a 4th.
    const elsewhere = plan.startSector - 2048;
    const pre = spawnSync('sfdisk', ['-q', '--append', disk], { input: `start=${elsewhere}, size=2048\n` });
    expect(pre.status).toBe(0);
    const data = Buffer.alloc(64 * 1024, 0xab);
    const before = bytesAt(plan.offsetBytes, data.length);
    const e = await createPartition(ctx, disk, plan, data).then(
      () => new Error('no error'),
      (x: unknown) => x as Error,
    );
    expect(e.message).toMatch(`partition 3 of ${disk} starts at byte ${elsewhere * 512} after creating it, not at byte ${plan.offsetBytes}`);
    expect(bytesAt(plan.offsetBytes, data.length).equals(before)).toBe(true);
    expect(bytesAt(elsewhere * 512, data.length).equals(data)).toBe(false);
  });

  it('without a usable partx the check is made on the controller and the caller writes after it', async () => {
    const plan = planFor(disk);
    const data = Buffer.alloc(64 * 1024, 0x5a);
    // partx that fails as a ramdisk's missing one would: sfdisk --json reads the table instead.
    const bin = join(dir, 'bin');
    spawnSync('mkdir', [bin]);
    writeFileSync(join(bin, 'partx'), '#!/bin/sh\necho "partx: not found" >&2\nexit 127\n', { mode: 0o755 });
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      const r = await createPartition(ctx, disk, plan, data);
      expect(r.extent).toMatchObject({ number: 3, offsetBytes: plan.offsetBytes });
      expect(r.readBack).toBeUndefined();
      expect(bytesAt(plan.offsetBytes, data.length).equals(data)).toBe(false);
    } finally {
      process.env.PATH = path;
    }
  });
});
