// erase_disk_metadata against a scripted ramdisk (no processes): check mode writes nothing,
// only the named disk is written, and a write that fails, a table that survives or bytes that
// do not read back as zeros fail the host with what to do.
import { describe, expect, it } from 'vitest';
import type { ExecResult } from '../../src/connection/types.js';
import { eraseDiskMetadataModule } from '../../src/modules/disk/erase_disk_metadata.js';
import type { ModuleContext } from '../../src/module-api/types.js';
import { stepsOneByOne } from '../helpers/steps-one-by-one.js';

type Script = Array<[RegExp, Partial<ExecResult> | (() => Partial<ExecResult>)]>;
const GiB = 1024 ** 3;
const PARTX = 'NR="1" START="2048" SECTORS="1048576" NAME="EFI-SYSTEM" SCHEME="gpt"\nNR="2" START="1050624" SECTORS="4194304" NAME="root" SCHEME="gpt"\n';

function fakeCtx(script: Script, check = false) {
  const calls: string[] = [];
  const warnings: string[] = [];
  const ctx = {
    host: 'node7',
    vars: {},
    check,
    diff: false,
    signal: new AbortController().signal,
    task: 'erase',
    services: { playbookDir: '/', tmpDir: '/tmp', get: <T>(_k: string, c: () => T) => c(), onClose: () => undefined },
    async exec(argv: readonly string[]) {
      const line = argv.join(' ');
      calls.push(line);
      const hit = script.find(([re]) => re.test(line))?.[1];
      const r = typeof hit === 'function' ? hit() : hit;
      return { rc: 0, stdout: '', stderr: '', ...(r ?? { rc: 127, stderr: `${argv[0]}: not found` }) };
    },
    execSteps: (steps: readonly (readonly string[])[]) => stepsOneByOne(ctx.exec, steps),
    secret: <T extends string>(v: T) => v,
    log: () => undefined,
    warn: (m: string) => {
      warnings.push(m);
    },
    progress: () => undefined,
  } as unknown as ModuleContext;
  return { ctx, calls, warnings };
}

/** A disk whose table is gone once wipefs or a zeroed head erases it (partx then fails, as on a blank disk). */
function disk(over: Script = []): Script {
  let wiped = false;
  return [
    ...over,
    [/^blockdev --getsize64 \/dev\/sdb$/, { stdout: `${8 * GiB}\n` }],
    [/^partx -P/, () => (wiped ? { rc: 1, stderr: 'partx: /dev/sdb: failed to read partition table' } : { stdout: PARTX })],
    [/^sh -c command -v wipefs$/, { stdout: '/usr/sbin/wipefs\n' }],
    [
      /^wipefs --all --force \/dev\/sdb$/,
      () => {
        wiped = true;
        return { rc: 0 };
      },
    ],
    [
      /^dd if=\/dev\/zero of=\/dev\/sdb bs=512 seek=0 /,
      () => {
        wiped = true; // the disk's first MiB holds the GPT
        return { rc: 0 };
      },
    ],
    [/^dd if=\/dev\/zero of=\/dev\/sdb /, { rc: 0 }],
    [/^blockdev --rereadpt/, { rc: 0 }],
    [/^cmp -s -n \d+ -i \d+:0 \/dev\/sdb \/dev\/zero$/, { rc: 0 }],
  ];
}

const run = (ctx: ModuleContext) => eraseDiskMetadataModule.run(ctx, { device: '/dev/sdb' });

describe('erase_disk_metadata', () => {
  it('zeroes the ends of the disk and of each partition on the named disk only, then verifies', async () => {
    const { ctx, calls } = fakeCtx(disk());
    const r = await run(ctx);
    expect(r).toMatchObject({ changed: true, device: '/dev/sdb', size_bytes: 8 * GiB });
    expect(r.msg).toBe('erased /dev/sdb: 2 partition(s), 4 range(s) of up to 1 MiB (and wipefs)');
    const writes = calls.filter((c) => c.startsWith('dd ') || c.startsWith('wipefs'));
    expect(writes.every((c) => c.includes('/dev/sdb'))).toBe(true);
    expect(writes.filter((c) => c.startsWith('dd '))).toHaveLength(4);
    expect(calls.filter((c) => c.startsWith('cmp '))).toHaveLength(4);
  });

  it('check mode reads and writes nothing', async () => {
    const { ctx, calls } = fakeCtx(disk(), true);
    const r = await run(ctx);
    expect(r.msg).toBe('would erase /dev/sdb: 2 partition(s), 4 range(s) of up to 1 MiB');
    expect(calls.some((c) => c.startsWith('dd ') || c.startsWith('wipefs'))).toBe(false);
  });

  it('without wipefs the zeroed ranges still do the work', async () => {
    const { ctx, calls } = fakeCtx(disk([[/^sh -c command -v wipefs$/, { rc: 1 }]]));
    expect((await run(ctx)).msg).toBe('erased /dev/sdb: 2 partition(s), 4 range(s) of up to 1 MiB');
    expect(calls.some((c) => c.startsWith('wipefs'))).toBe(false);
    expect(calls.filter((c) => c.startsWith('dd '))).toHaveLength(4);
  });

  it('a partition table that survives fails the host', async () => {
    const { ctx } = fakeCtx(disk([[/^partx -P/, { stdout: PARTX }]]));
    await expect(run(ctx)).rejects.toThrow(/node7: \/dev\/sdb still shows 2 partition\(s\) after the erase/);
  });

  it('a failed write fails the host and says to run it again', async () => {
    const { ctx } = fakeCtx(disk([[/^dd /, { rc: 1, stderr: 'dd: error writing: Input/output error' }]]));
    await expect(run(ctx)).rejects.toThrow(/node7: `dd if=\/dev\/zero of=\/dev\/sdb` failed \(rc 1\): dd: error writing/);
  });

  it('bytes that do not read back as zeros fail the host', async () => {
    const { ctx } = fakeCtx(disk([[/^cmp .* -i 0:0 /, { rc: 1 }]]));
    await expect(run(ctx)).rejects.toThrow(/node7: \/dev\/sdb does not read back as zeros at 0\+\d+ after the erase/);
  });

  it('a ramdisk without cmp fails the host: an erase nothing read back is not reported as done', async () => {
    const { ctx } = fakeCtx(disk([[/^cmp /, { rc: 127, stderr: 'sh: 1: cmp: not found' }]]));
    await expect(run(ctx)).rejects.toThrow(/node7: cannot check that \/dev\/sdb reads back as zeros after the erase: cmp exited 127 \(sh: 1: cmp: not found\)/);
  });

  it('a ramdisk without partx fails the host before writing: the partitions would keep their signatures', async () => {
    const { ctx, calls } = fakeCtx(disk([[/^partx -P/, { rc: 127, stderr: 'sh: 1: partx: not found' }]]));
    await expect(run(ctx)).rejects.toThrow(/node7: cannot list the partitions of \/dev\/sdb: sh: 1: partx: not found/);
    expect(calls.some((c) => c.startsWith('dd ') || c.startsWith('wipefs'))).toBe(false);
  });
});
