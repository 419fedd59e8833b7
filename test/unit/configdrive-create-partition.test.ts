// configdrive_write's partition creation (sfdisk --append, on GPT and MBR) against a scripted
// ramdisk: the table is read back with partx -P in the same round trip (sfdisk only when partx fails), and the new partition
// must start at the planned byte offset. partx counts 512-byte units, the plan the disk's own
// sectors, so a 4Kn disk is where mixing the two would go wrong.
import { describe, expect, it } from 'vitest';
import type { ExecResult } from '../../src/connection/types.js';
import { createPartition } from '../../src/modules/configdrive/configdrive-partition.js';
import { parseSfdiskJson } from '../../src/configdrive/partition-table.js';
import { type Placement, placeConfigDrive } from '../../src/configdrive/placement.js';
import { TsbmError } from '../../src/errors.js';
import { stepsOneByOne } from '../helpers/steps-one-by-one.js';

type Script = Array<[RegExp, Partial<ExecResult>]>;
type Create = Extract<Placement, { action: 'create' }>;

const MiB = 1024 * 1024;
const DISK = 1024 * MiB;

function fakeCtx(script: Script) {
  const calls: string[] = [];
  const stdins: (string | undefined)[] = [];
  const exec = async (argv: readonly string[], opts?: { stdin?: string | Buffer }): Promise<ExecResult> => {
    const line = argv.join(' ');
    calls.push(line);
    stdins.push(opts?.stdin?.toString());
    const hit = script.find(([re]) => re.test(line));
    return {
      rc: 0,
      stdout: '',
      stderr: '',
      ...(hit?.[1] ?? { rc: 127, stderr: `sh: ${argv[0]}: not found` }),
    };
  };
  return {
    calls,
    stdins,
    ctx: {
      host: 'node7',
      task: 't',
      exec,
      execSteps: (steps: readonly (readonly string[])[], opts?: Parameters<typeof stepsOneByOne>[2]) =>
        stepsOneByOne(exec, steps, opts),
    },
  };
}

/** The plan for a disk of DISK bytes with `sectorSize` sectors, ESP + root in the first 900 MiB. */
function plan(sectorSize: 512 | 4096): Create {
  const spm = MiB / sectorSize;
  const firstlba = sectorSize === 512 ? 34 : 6;
  const table = parseSfdiskJson(
    JSON.stringify({
      partitiontable: {
        label: 'gpt',
        sectorsize: sectorSize,
        firstlba,
        lastlba: DISK / sectorSize - firstlba,
        partitions: [
          { node: '/dev/sda1', start: spm, size: 64 * spm, type: 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B' },
          {
            node: '/dev/sda2',
            start: 65 * spm,
            size: 835 * spm,
            type: '4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709',
          },
        ],
      },
    }),
    '/dev/sda',
  );
  const p = placeConfigDrive('/dev/sda', table, [], DISK, MiB);
  if (p.action !== 'create') throw new Error('expected a create plan');
  return p;
}

/** `partx -P` lines for ESP, root and partition 3 at `start512` (in partx's 512-byte units). */
function partxOut(sectorSize: number, start512: number): string {
  const u = sectorSize / 512;
  const spm = MiB / sectorSize;
  return [
    `NR="1" START="${spm * u}" SECTORS="${64 * spm * u}" NAME="EFI-SYSTEM" SCHEME="gpt"`,
    `NR="2" START="${65 * spm * u}" SECTORS="${835 * spm * u}" NAME="root" SCHEME="gpt"`,
    `NR="3" START="${start512}" SECTORS="${(64 * MiB) / 512}" NAME="config-2" SCHEME="gpt"`,
    '',
  ].join('\n');
}

describe('createPartition', () => {
  for (const ss of [512, 4096] as const) {
    describe(`${ss}-byte sectors`, () => {
      const want = plan(ss);
      const rightStart512 = (want.startSector * ss) / 512;

      it('creates with sfdisk --append in device sectors, named config-2; reads back with partx -P in the same batch', async () => {
        const { ctx, calls, stdins } = fakeCtx([
          [/^sfdisk --append/, {}],
          [/^partx -u/, { rc: 1, stderr: 'partx: error updating partition 3' }],
          [/^partx -P/, { stdout: partxOut(ss, rightStart512) }],
        ]);
        expect(want.offsetBytes).toBe(want.startSector * ss);
        expect(await createPartition(ctx, '/dev/sda', want)).toEqual({
          extent: { number: 3, offsetBytes: want.offsetBytes, sizeBytes: 64 * MiB, name: 'config-2' },
        });
        expect(calls).toEqual([
          'sfdisk --append --no-reread --no-tell-kernel /dev/sda',
          'partx -u /dev/sda',
          'partx -P -o NR,START,SECTORS,NAME,SCHEME /dev/sda',
        ]);
        // No sgdisk: it syncs every filesystem and sleeps a second after writing.
        expect(stdins).toEqual([
          `start=${want.startSector}, size=${want.sizeSectors}, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=config-2\n`,
          undefined,
          undefined,
        ]);
      });

      it('rejects partition 3 at another byte offset', async () => {
        const { ctx } = fakeCtx([
          [/^sfdisk --append/, {}],
          [/^partx -P/, { stdout: partxOut(ss, rightStart512 - 8) }],
        ]);
        const e = await createPartition(ctx, '/dev/sda', want).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(TsbmError);
        expect((e as TsbmError).message).toBe(
          `node7: partition 3 of /dev/sda starts at byte ${want.offsetBytes - 4096} after creating it, not at byte ${want.offsetBytes}`,
        );
      });

      it('a missing partition 3 is an error too', async () => {
        const out = partxOut(ss, rightStart512).split('\n').slice(0, 2).join('\n');
        const { ctx } = fakeCtx([
          [/^sfdisk --append/, {}],
          [/^partx -P/, { stdout: out }],
        ]);
        await expect(createPartition(ctx, '/dev/sda', want)).rejects.toThrow(
          /partition 3 is not in the table of \/dev\/sda after creating it/,
        );
      });

      it('partx missing: sfdisk --json, whose sectors are the device sectors', async () => {
        const sf = (start: number) =>
          JSON.stringify({
            partitiontable: {
              label: 'gpt',
              sectorsize: ss,
              partitions: [{ node: '/dev/sda3', start, size: want.sizeSectors, type: 'x', name: 'config-2' }],
            },
          });
        const ok = fakeCtx([
          [/^sfdisk --append/, {}],
          [/^sfdisk --json/, { stdout: sf(want.startSector) }],
        ]);
        expect(await createPartition(ok.ctx, '/dev/sda', want)).toMatchObject({
          extent: { offsetBytes: want.offsetBytes },
        });
        expect(ok.calls.slice(-2)).toEqual([
          'partx -P -o NR,START,SECTORS,NAME,SCHEME /dev/sda',
          'sfdisk --json /dev/sda',
        ]);
        const off = fakeCtx([
          [/^sfdisk --append/, {}],
          [/^sfdisk --json/, { stdout: sf(want.startSector + 1) }],
        ]);
        await expect(createPartition(off.ctx, '/dev/sda', want)).rejects.toThrow(
          `starts at byte ${want.offsetBytes + ss} after creating it`,
        );
      });
    });
  }

  it('4Kn: a START equal to the device sector (units mixed up) is the wrong place', async () => {
    const want = plan(4096);
    const { ctx } = fakeCtx([
      [/^sfdisk --append/, {}],
      [/^partx -P/, { stdout: partxOut(4096, want.startSector) }],
    ]);
    await expect(createPartition(ctx, '/dev/sda', want)).rejects.toThrow(
      `starts at byte ${want.startSector * 512} after creating it, not at byte ${want.startSector * 4096}`,
    );
  });

  it('partx output that does not parse also falls back to sfdisk; sfdisk failing names it', async () => {
    const want = plan(512);
    const { ctx, calls } = fakeCtx([
      [/^sfdisk --append/, {}],
      [/^partx -P/, { stdout: 'partx: garbage\n' }],
      [/^sfdisk --json/, { rc: 1, stderr: 'sfdisk: cannot open /dev/sda' }],
    ]);
    await expect(createPartition(ctx, '/dev/sda', want)).rejects.toThrow(
      /`sfdisk --json \/dev\/sda` failed \(rc 1\)/,
    );
    expect(calls.at(-1)).toBe('sfdisk --json /dev/sda');
  });

  it('MBR: sfdisk --append with the script on stdin, then partx -P', async () => {
    const table = parseSfdiskJson(
      JSON.stringify({
        partitiontable: {
          label: 'dos',
          sectorsize: 512,
          partitions: [{ node: '/dev/sda1', start: 2048, size: 409600, type: '83' }],
        },
      }),
      '/dev/sda',
    );
    const want = placeConfigDrive('/dev/sda', table, [], 512 * MiB, MiB);
    if (want.action !== 'create') throw new Error('expected a create plan');
    const { ctx, calls, stdins } = fakeCtx([
      [/^sfdisk --append/, {}],
      [
        /^partx -P/,
        {
          stdout: `NR="1" START="2048" SECTORS="409600" NAME="" SCHEME="dos"\nNR="2" START="${want.startSector}" SECTORS="${want.sizeSectors}" NAME="" SCHEME="dos"\n`,
        },
      ],
    ]);
    expect(await createPartition(ctx, '/dev/sda', want)).toEqual({
      extent: { number: 2, offsetBytes: want.offsetBytes, sizeBytes: want.sizeBytes },
    });
    expect(calls).toEqual([
      'sfdisk --append --no-reread --no-tell-kernel /dev/sda',
      'partx -u /dev/sda',
      'partx -P -o NR,START,SECTORS,NAME,SCHEME /dev/sda',
    ]);
    expect(stdins[0]).toBe(`start=${want.startSector}, size=${want.sizeSectors}, type=83\n`);
  });
});
