// Which partitions configdrive_write probes for an ISO labelled config-2: not the ones whose
// GPT type says they hold the installed system (ESP, root), which saves a round trip after bootc.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { execSteps } from '../../src/connection/exec-steps.js';
import { localConnection } from '../../src/connection/local.js';
import { configDrivePartitions, writeAndReadBack } from '../../src/modules/configdrive/configdrive-disk-io.js';
import { scratchDirs } from '../helpers/scratch.js';
import type { Partition } from '../../src/configdrive/partition-table.js';
import { stepsOneByOne } from '../helpers/steps-one-by-one.js';

const part = (number: number, type: string, name?: string): Partition => ({
  number,
  startSector: number * 2048,
  sizeSectors: 2048,
  offsetBytes: number * 2048 * 512,
  sizeBytes: 2048 * 512,
  type,
  ...(name ? { name } : {}),
});

function ctxReading(labels: Record<number, string>) {
  const probed: number[] = [];
  const pvd = (label: string) => `\u0001CD001${' '.repeat(34)}${label.padEnd(32, ' ')}`;
  const exec = async (argv: readonly string[]) => {
    const skip = Number(/skip=(\d+)/.exec(argv.join(' '))?.[1]);
    const n = (skip - 16 * 2048) / (2048 * 512);
    probed.push(n);
    return { rc: 0, stdout: labels[n] ? pvd(labels[n]) : '', stderr: '' };
  };
  return {
    probed,
    ctx: {
      host: 'n1',
      task: 't',
      exec,
      execSteps: (steps: readonly (readonly string[])[]) => stepsOneByOne(exec, steps),
    },
  };
}

describe('configDrivePartitions', () => {
  it('skips the ESP and root partitions, finds an unnamed ISO labelled config-2 elsewhere', async () => {
    const { ctx, probed } = ctxReading({ 3: 'config-2' });
    const parts = [
      part(1, 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B', 'EFI-SYSTEM'),
      part(2, '4f68bce3-e8cd-4db1-96e7-fbcaf984b709', 'root'),
      part(3, '0FC63DAF-8483-4772-8E79-3D69D8477DE4'),
      part(4, '0FC63DAF-8483-4772-8E79-3D69D8477DE4', 'data'),
    ];
    const found = await configDrivePartitions(ctx, '/dev/vda', parts);
    expect(found.map((p) => p.number)).toEqual([3]);
    expect(probed).toEqual([3, 4]);
  });
  it('a GPT name config-2 counts without a probe', async () => {
    const { ctx, probed } = ctxReading({});
    const found = await configDrivePartitions(ctx, '/dev/vda', [part(5, '0FC63DAF-8483-4772-8E79-3D69D8477DE4', 'config-2')]);
    expect(found.map((p) => p.number)).toEqual([5]);
    expect(probed).toEqual([]);
  });
});

describe('writeAndReadBack', () => {
  const scratch = scratchDirs();
  it('writes and reads back every byte value in one round trip (the batch output is binary-safe)', async () => {
    const disk = join(scratch('tsbm-wrb-'), 'disk.img');
    writeFileSync(disk, Buffer.alloc(1 << 20));
    const data = Buffer.from(Array.from({ length: 3 * 256 + 7 }, (_, i) => (i * 7) % 256));
    const conn = localConnection('n1');
    const batches: number[] = [];
    const ctx = {
      host: 'n1',
      task: 't',
      exec: conn.exec,
      execSteps: (steps: readonly (readonly string[])[], opts?: Parameters<typeof execSteps>[2]) => {
        batches.push(steps.length);
        return execSteps(conn, steps, opts);
      },
    };
    const sha = await writeAndReadBack(ctx, disk, data, 4096);
    expect(sha).toBe(createHash('sha256').update(data).digest('hex'));
    expect(readFileSync(disk).subarray(4096, 4096 + data.length).equals(data)).toBe(true);
    expect(batches).toEqual([3]);
  });
});
