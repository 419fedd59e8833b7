// image_write's decisions against a scripted ramdisk (no processes): errors name the host and
// touch nothing, check mode writes nothing, the URL and its credentials stay out of argv, and
// a qcow2 that cannot fit the ramdisk's memory is refused before downloading.
import { describe, expect, it } from 'vitest';
import type { ExecOptions, ExecResult } from '../../src/connection/types.js';
import { TsbmError } from '../../src/errors.js';
import { imageWriteModule } from '../../src/modules/image/image_write.js';
import type { ModuleContext } from '../../src/module-api/types.js';
import { qcow2Header } from '../helpers/image-headers.js';
import { stepsOneByOne } from '../helpers/steps-one-by-one.js';

type Script = Array<[RegExp, Partial<ExecResult>]>;
const H = 'ab'.repeat(32);
/** The ramdisk's first look at the URL (the inspector's bytes), and its read-back of the disk. */
const peek = (head: Buffer): [RegExp, Partial<ExecResult>] => [/TSBM_PEEK/, { stdout: head.toString('latin1'), stderr: 'TSBM_PEEK curl=0\n' }];
const RAW_PEEK = peek(Buffer.alloc(65536));
const READ_BACK: [RegExp, Partial<ExecResult>] = [/^dd if=\/dev\/sda bs=65536/, { stdout: Buffer.alloc(65536).toString('latin1') }];

function fakeCtx(script: Script, vars: Record<string, unknown>, check = false) {
  const calls: Array<{ line: string; opts?: ExecOptions }> = [];
  const secrets: string[] = [];
  const ctx: ModuleContext = {
    host: 'node9',
    vars,
    check,
    diff: false,
    signal: new AbortController().signal,
    task: 'Write the image',
    services: {
      playbookDir: '/',
      tmpDir: '/tmp',
      get: <T>(_k: string, c: () => T) => c(),
      onClose: () => undefined,
    },
    async exec(argv, opts) {
      const line = argv.join(' ');
      calls.push({ line, ...(opts ? { opts } : {}) });
      const hit = script.find(([re]) => re.test(line));
      return { rc: 0, stdout: '', stderr: '', ...(hit?.[1] ?? { rc: 127, stderr: `${argv[0]}: not found` }) };
    },
    execSteps: (steps, opts) => stepsOneByOne(ctx.exec, steps, opts),
    execShell: async () => ({ rc: 0, stdout: '', stderr: '' }),
    put: async () => undefined,
    get: async () => Buffer.from(''),
    local: async () => ({ rc: 0, stdout: '', stderr: '' }),
    connect: async () => {
      throw new Error('no');
    },
    secret: <T extends string>(v: T) => {
      secrets.push(v);
      return v;
    },
    log: () => undefined,
    warn: () => undefined,
    progress: () => undefined,
  };
  return { ctx, calls, secrets };
}

const info = (extra: Record<string, unknown> = {}) => ({
  instance_info: { image_source: 'https://img.example/os.raw', image_os_hash_value: H, ...extra },
});

describe('image_write (scripted ramdisk)', () => {
  it('refuses md5 and a missing checksum with the host named, running nothing', async () => {
    for (const v of [
      info({ image_os_hash_algo: 'md5', image_os_hash_value: 'a'.repeat(32) }),
      info({ image_os_hash_value: '' }),
    ]) {
      const { ctx, calls } = fakeCtx([], v);
      const e = await imageWriteModule.run(ctx, { device: '/dev/sda' }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(TsbmError);
      expect((e as TsbmError).message).toMatch(/^node9: /);
      expect((e as TsbmError).hint).toBeTruthy();
      expect(calls).toEqual([]);
    }
  });

  it('accepts md5 where the preflight does: the allow_md5 variable, or instance_info.image_allow_md5', async () => {
    const md5 = info({ image_os_hash_algo: 'md5', image_os_hash_value: 'a'.repeat(32) });
    for (const vars of [
      { ...md5, allow_md5: true },
      { instance_info: { ...md5.instance_info, image_allow_md5: true } },
    ]) {
      const { ctx } = fakeCtx([[/^blockdev --getsize64/, { stdout: '10737418240\n' }]], vars, true);
      const r = await imageWriteModule.run(ctx, { device: '/dev/sda' });
      expect(r.msg).toMatch(/would write raw image https:\/\/img\.example\/os\.raw to \/dev\/sda/);
    }
  });

  it('check mode reports the plan and writes nothing', async () => {
    const { ctx, calls } = fakeCtx([[/^blockdev --getsize64/, { stdout: '10737418240\n' }]], info(), true);
    const r = await imageWriteModule.run(ctx, { device: '/dev/sda' });
    expect(r).toMatchObject({ changed: true, device: '/dev/sda', disk_format: 'raw' });
    expect(r.msg).toMatch(
      /would write raw image https:\/\/img\.example\/os\.raw to \/dev\/sda \(10\.0 GiB\)/,
    );
    expect(calls.map((c) => c.line)).toEqual(['blockdev --getsize64 /dev/sda']);
  });

  it('refuses a raw image bigger than the disk before writing', async () => {
    const { ctx, calls } = fakeCtx(
      [
        [/^blockdev --getsize64/, { stdout: '1048576\n' }],
        [/curl -fsSIL/, { stdout: 'HTTP/1.1 200 OK\r\nContent-Length: 2097152\r\n' }],
        RAW_PEEK,
      ],
      info(),
    );
    await expect(imageWriteModule.run(ctx, { device: '/dev/sda' })).rejects.toThrow(
      /larger than \/dev\/sda.*nothing was written/,
    );
    // Only the inspector's first look ran dd (reading the URL's first bytes), nothing wrote.
    expect(calls.some((c) => !c.line.includes('TSBM_PEEK') && (c.line.includes(' dd ') || c.line.startsWith('dd')))).toBe(false);
  });

  it('keeps URL credentials out of argv: registered as secrets, sent as secret env', async () => {
    const url = 'https://deploy:Pw-zz-91@img.example/os.raw?sig=tok123';
    const { ctx, calls, secrets } = fakeCtx(
      [
        [/^blockdev --getsize64/, { stdout: '10737418240\n' }],
        [/curl -fsSIL/, { stdout: 'Content-Length: 4194304\r\n' }],
        [
          /^sh -c set -u/,
          {
            stdout: `TSBM_STREAM curl=0 dd=0 hashrc=0 hash=${H}\n`,
            stderr: '4194304 bytes (4.2 MB, 4.0 MiB) copied, 0.1 s\n',
          },
        ],
        [/^sfdisk --json/, { stdout: JSON.stringify({ partitiontable: { label: 'gpt' } }) }],
        [/^sgdisk -e/, {}],
        RAW_PEEK,
        READ_BACK,
      ],
      info({ image_source: url }),
    );
    const r = await imageWriteModule.run(ctx, { device: '/dev/sda' });
    expect(r).toMatchObject({ changed: true, bytes: 4194304, gpt_backup_relocated: true });
    expect(secrets).toEqual(expect.arrayContaining(['Pw-zz-91', url]));
    for (const c of calls) {
      expect(c.line).not.toContain('Pw-zz-91');
      expect(c.line).not.toContain('tok123');
    }
    const stream = calls.find((c) => c.line.startsWith('sh -c set -u'))!;
    expect(stream.opts?.secretEnv?.TSBM_IMAGE_URL).toBe(url);
    expect(calls.map((c) => c.line)).toContain('sgdisk -e /dev/sda');
  });

  it('a qcow2 larger than MemAvailable with margin is refused before downloading', async () => {
    const { ctx, calls } = fakeCtx(
      [
        [/^blockdev --getsize64/, { stdout: '107374182400\n' }],
        [/curl -fsSIL/, { stdout: `Content-Length: ${3 * 1024 ** 3}\r\n` }],
        [/^cat \/proc\/meminfo/, { stdout: 'MemTotal: 4000000 kB\nMemAvailable: 3000000 kB\n' }],
        peek(qcow2Header({ virtualSize: 10n * 1024n ** 3n })),
      ],
      info({ image_source: 'https://img.example/os.qcow2' }),
    );
    await expect(imageWriteModule.run(ctx, { device: '/dev/sda' })).rejects.toThrow(
      /node9: the qcow2 image \(3\.0 GiB\).*MemAvailable 2\.9 GiB/,
    );
    expect(calls.some((c) => c.line.includes('-C -'))).toBe(false);
  });

  it('a qcow2 behind a URL declared raw is refused from its first bytes, naming what it names; nothing is written', async () => {
    const { ctx, calls } = fakeCtx(
      [
        [/^blockdev --getsize64/, { stdout: '10737418240\n' }],
        [/curl -fsSIL/, { stdout: 'Content-Length: 4194304\r\n' }],
        peek(qcow2Header({ backing: '/etc/ssh/ssh_host_ed25519_key' })),
      ],
      info({ image_disk_format: 'raw' }),
    );
    const e = (await imageWriteModule.run(ctx, { device: '/dev/sda' }).catch((x: unknown) => x)) as TsbmError;
    expect(e.message).toBe(
      'node9: https://img.example/os.raw is refused: image_disk_format says raw, but the image is qcow2 (1 GiB virtual); it names a backing file "/etc/ssh/ssh_host_ed25519_key"; nothing was written to /dev/sda',
    );
    expect(calls.some((c) => c.line.startsWith('sh -c set -u') || c.line.includes('qemu-img'))).toBe(false);
  });

  it('a stream that times out fails the host and wipes the partial image', async () => {
    const { ctx, calls } = fakeCtx(
      [
        [/^blockdev --getsize64/, { stdout: '10737418240\n' }],
        [/^sgdisk --zap-all/, {}],
        [/^wipefs/, {}],
        [/^sfdisk --json/, { rc: 1, stderr: 'does not contain a recognized partition table' }],
        RAW_PEEK,
      ],
      info(),
    );
    const exec = ctx.exec.bind(ctx);
    (ctx as { exec: ModuleContext['exec'] }).exec = async (argv, opts) => {
      if (argv[0] === 'sh' && String(argv[2]).startsWith('set -u')) throw new Error('command timed out');
      return exec(argv, opts);
    };
    await expect(imageWriteModule.run(ctx, { device: '/dev/sda', timeout: 5 })).rejects.toThrow(
      /node9: writing https:\/\/img\.example\/os\.raw to \/dev\/sda did not finish within 5s; the partition table on \/dev\/sda was wiped/,
    );
    expect(calls.map((c) => c.line)).toEqual(
      expect.arrayContaining(['sgdisk --zap-all /dev/sda', 'wipefs -a -f /dev/sda']),
    );
  });
});
