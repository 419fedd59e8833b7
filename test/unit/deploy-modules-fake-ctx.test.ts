// Module logic against a scripted ramdisk (no processes): check mode, by_path lookup,
// SELinux decisions, and errors that name the host.
import { describe, expect, it } from 'vitest';
import type { ExecResult } from '../../src/connection/types.js';
import { TsbmError, UnreachableError } from '../../src/errors.js';
import { bootcInstallModule } from '../../src/modules/bootc/bootc_install.js';
import { podmanPullModule } from '../../src/modules/bootc/podman_pull.js';
import { rootDeviceModule } from '../../src/modules/disk/root_device.js';
import type { ModuleContext } from '../../src/module-api/types.js';
import { waitAgentModule } from '../../src/modules/ramdisk/wait_agent.js';
import { stepsOneByOne } from '../helpers/steps-one-by-one.js';

type Script = Array<[RegExp, Partial<ExecResult>]>;

function fakeCtx(script: Script, vars: Record<string, unknown> = {}, check = false) {
  const calls: string[] = [];
  const puts: Array<{ path: string; mode?: number }> = [];
  const ctx: ModuleContext = {
    host: 'node7',
    vars,
    check,
    diff: false,
    signal: new AbortController().signal,
    task: 't',
    services: {
      playbookDir: '/',
      tmpDir: '/tmp',
      get: <T>(_k: string, c: () => T) => c(),
      onClose: () => undefined,
    },
    async exec(argv) {
      const line = argv.join(' ');
      calls.push(line);
      const hit = script.find(([re]) => re.test(line));
      return { rc: 0, stdout: '', stderr: '', ...(hit?.[1] ?? { rc: 127, stderr: `${argv[0]}: not found` }) };
    },
    execSteps: (steps, opts) => stepsOneByOne(ctx.exec, steps, opts),
    execShell: async () => ({ rc: 0, stdout: '', stderr: '' }),
    async put(_d, path, o) {
      puts.push({ path, ...(o?.mode === undefined ? {} : { mode: o.mode }) });
    },
    get: async () => Buffer.from(''),
    local: async () => ({ rc: 0, stdout: '', stderr: '' }),
    connect: async () => {
      throw new Error('no');
    },
    secret: <T extends string>(v: T) => v,
    log: () => undefined,
    warn: () => undefined,
    progress: () => undefined,
  };
  return { ctx, calls, puts };
}

const LSBLK = JSON.stringify({
  blockdevices: [
    { name: 'sda', kname: 'sda', type: 'disk', size: 500 * 1024 ** 3, rota: '0', ro: '0' },
    { name: 'sdb', kname: 'sdb', type: 'disk', size: 100 * 1024 ** 3, rota: '1', ro: '0' },
  ],
});

describe('root_device (scripted ramdisk)', () => {
  it('by_path hints look up /dev/disk/by-path once', async () => {
    const { ctx, calls } = fakeCtx([
      [/^lsblk/, { stdout: LSBLK }],
      [
        /^find \/dev\/disk\/by-path/,
        {
          stdout:
            '/dev/disk/by-path/pci-0000:00:1f.2-ata-1\t../../sda\n/dev/disk/by-path/pci-0000:00:1f.2-ata-2\t../../sdb\n',
        },
      ],
    ]);
    const r = await rootDeviceModule.run(ctx, { hints: { by_path: 'pci-0000:00:1f.2-ata-2' } });
    expect(r.device).toBe('/dev/sdb');
    expect(calls.filter((c) => c.startsWith('lsblk'))).toHaveLength(1);
  });
  it('a bad hint is a host error with a hint', async () => {
    const { ctx } = fakeCtx([[/^lsblk/, { stdout: LSBLK }]], {
      instance_info: { root_device: { sise: 10 } },
    });
    const e = await rootDeviceModule.run(ctx, {}).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TsbmError);
    expect((e as TsbmError).host).toBe('node7');
    expect((e as TsbmError).message).toMatch(/node7: unknown root device hint "sise"/);
    expect((e as TsbmError).hint).toMatch(/root_device/);
  });
  it('explicit hints override instance_info', async () => {
    const { ctx } = fakeCtx([[/^lsblk/, { stdout: LSBLK }]], {
      instance_info: { root_device: { size: 500 } },
    });
    expect((await rootDeviceModule.run(ctx, { hints: { rotational: true } })).device).toBe('/dev/sdb');
  });
});

describe('bootc_install (scripted ramdisk)', () => {
  const vars = {
    instance_info: { image_source: 'oci://r:5000/i:1' },
    root: { device: '/dev/sda', size_mib: 10000, reason: 'r' },
  };
  it('check mode reports the command, runs only getenforce', async () => {
    const { ctx, calls, puts } = fakeCtx([[/^getenforce/, { stdout: 'Permissive\n' }]], vars, true);
    const r = await bootcInstallModule.run(ctx, {});
    expect(r.cmd).toContain('label=type:unconfined_t');
    expect(r.root_size_mib).toBe(10000 - 768);
    expect(calls).toEqual(['getenforce', 'podman image inspect --format json r:5000/i:1']);
    expect(puts).toEqual([]);
  });
  it('a missing device says to run root_device', async () => {
    const { ctx } = fakeCtx([], { instance_info: { image_source: 'oci://r/i:1' } });
    await expect(bootcInstallModule.run(ctx, {})).rejects.toThrow(/no install device/);
  });
  const PARTX = 'partx -P -o NR,START,SECTORS,NAME,SCHEME /dev/sda';
  const installed = (more: Script = []): Script => [
    [/^podman image inspect/, { stdout: '[{"Size": 1000}]' }],
    [/^podman run/, { stdout: 'Installation complete!' }],
    ...more,
  ];
  it('reads the new table with partx -P in the install batch, not sfdisk', async () => {
    const { ctx, calls } = fakeCtx(
      installed([
        [
          /^partx -P/,
          {
            stdout:
              'NR="1" START="2048" SECTORS="1048576" NAME="EFI-SYSTEM" SCHEME="gpt"\nNR="2" START="1050624" SECTORS="15204352" NAME="root" SCHEME="gpt"\n',
          },
        ],
      ]),
      vars,
    );
    expect(await bootcInstallModule.run(ctx, {})).toMatchObject({ partition_table: 'gpt', partitions: 2 });
    expect(calls.at(-1)).toBe(PARTX);
    expect(calls.filter((c) => /^(sfdisk|sgdisk)/.test(c))).toEqual([]);
  });
  it('partx missing (rc 127): one more round trip, to sfdisk --json', async () => {
    const { ctx, calls } = fakeCtx(
      installed([
        [
          /^sfdisk --json \/dev\/sda$/,
          { stdout: '{"partitiontable":{"label":"dos","partitions":[{},{},{}]}}' },
        ],
      ]),
      vars,
    );
    expect(await bootcInstallModule.run(ctx, {})).toMatchObject({ partition_table: 'dos', partitions: 3 });
    expect(calls.slice(-2)).toEqual([PARTX, 'sfdisk --json /dev/sda']);
  });
  it('partx printing nothing it can parse also asks sfdisk', async () => {
    const { ctx, calls } = fakeCtx(
      installed([
        [/^partx -P/, { stdout: 'NR START\n1 2048\n' }],
        [/^sfdisk --json/, { stdout: '{"partitiontable":{"label":"gpt","partitions":[{}]}}' }],
      ]),
      vars,
    );
    expect(await bootcInstallModule.run(ctx, {})).toMatchObject({ partitions: 1 });
    expect(calls.slice(-2)).toEqual([PARTX, 'sfdisk --json /dev/sda']);
  });
  it('success without partitions afterwards is an error (partx prints nothing for an empty GPT)', async () => {
    const { ctx } = fakeCtx(
      installed([
        [/^partx -P/, { stdout: '' }],
        [/^sfdisk --json/, { stdout: '{"partitiontable":{"label":"gpt","partitions":[]}}' }],
      ]),
      vars,
    );
    await expect(bootcInstallModule.run(ctx, {})).rejects.toThrow(/has no partitions afterwards/);
  });
  it('no table at all: partx rc 1, sfdisk rc 1, sgdisk finds nothing: "no partitions afterwards"', async () => {
    const { ctx, calls } = fakeCtx(
      installed([
        [/^partx -P/, { rc: 1, stderr: 'partx: /dev/sda: failed to read partition table\n' }],
        [
          /^sfdisk --json/,
          { rc: 1, stderr: 'sfdisk: /dev/sda: does not contain a recognized partition table\n' },
        ],
        [/^sgdisk -p/, { rc: 2, stdout: 'Creating new GPT entries in memory.\n' }],
      ]),
      vars,
    );
    await expect(bootcInstallModule.run(ctx, {})).rejects.toThrow(
      /bootc reported success but \/dev\/sda has no partitions afterwards/,
    );
    expect(calls.slice(-3)).toEqual([PARTX, 'sfdisk --json /dev/sda', 'sgdisk -p /dev/sda']);
  });
  it('falls back to sgdisk -p when partx and sfdisk are missing', async () => {
    const sg =
      'Number  Start (sector)    End (sector)  Size       Code  Name\n   1            2048         1050623   512.0 MiB   EF00  EFI\n   2         1050624        9999999   4.3 GiB     8300  root\n';
    const { ctx, calls } = fakeCtx(
      [
        [/^podman image inspect/, { stdout: '[]' }],
        [/^podman run/, {}],
        [/^sgdisk -p/, { stdout: sg }],
      ],
      vars,
    );
    expect(await bootcInstallModule.run(ctx, {})).toMatchObject({ partitions: 2 });
    expect(calls.slice(-3)).toEqual([PARTX, 'sfdisk --json /dev/sda', 'sgdisk -p /dev/sda']);
  });
});

describe('podman_pull and wait_agent check mode', () => {
  it('podman_pull in check mode runs nothing and writes nothing', async () => {
    const { ctx, calls, puts } = fakeCtx(
      [],
      { instance_info: { image_source: 'oci://r/i:1', image_pull_secret: 'dTpw' } },
      true,
    );
    const r = await podmanPullModule.run(ctx, {});
    expect(r.msg).toMatch(/would pull r\/i:1 with a temporary auth file/);
    expect(calls).toEqual([]);
    expect(puts).toEqual([]);
  });
  it('a malformed pull secret fails before anything is written', async () => {
    const { ctx, puts } = fakeCtx([], {
      instance_info: { image_source: 'oci://r/i:1', image_pull_secret: '{"nope": 1}' },
    });
    await expect(podmanPullModule.run(ctx, {})).rejects.toThrow(/no "auths" mapping/);
    expect(puts).toEqual([]);
  });
  it('wait_agent with a short timeout still tries several times', async () => {
    const { ctx } = fakeCtx([]);
    let attempts = 0;
    const counting = { ...ctx, connect: () => Promise.reject(new Error(`refused ${++attempts}`)) };
    await expect(waitAgentModule.run(counting, { timeout: 3 })).rejects.toThrow(
      /did not accept SSH within 3s.*last error: refused \d/,
    );
    expect(attempts).toBeGreaterThanOrEqual(3);
  });
  it('wait_agent sees a ramdisk that comes up a moment after power-on within a quarter second, not after a doubling backoff', async () => {
    const { ctx } = fakeCtx([]);
    const started = Date.now();
    let attempts = 0;
    const booting = {
      ...ctx,
      connect: () => {
        attempts++;
        // Up 1.6 s after the wait began: a doubling backoff tried at 0, 0.5, 1.5 and 3.5 s (4 attempts).
        // Once up, a setting error ends the wait at once: this test is about when the wait sees it.
        return Promise.reject(Date.now() - started < 1600 ? new Error('connection refused') : new TsbmError('options', 'up now'));
      },
    };
    await expect(waitAgentModule.run(booting, { timeout: 60 })).rejects.toThrow('up now');
    expect(attempts).toBeGreaterThanOrEqual(5);
  });
  it('wait_agent does not wait out its timeout on a setting that no retry fixes (bad connection vars, unreadable key)', async () => {
    const { ctx } = fakeCtx([]);
    for (const e of [
      new TsbmError('parse', 'host node1: ssh_transfer_method must be smart, sftp or piped, got "bogus"', { hint: 'fix ssh_transfer_method in the inventory or host_vars' }),
      new UnreachableError('node1', "cannot read SSH private key /nope: ENOENT: no such file or directory, open '/nope'", undefined, 'check ssh_private_key_file', { setting: true }),
    ]) {
      let attempts = 0;
      const bad = {
        ...ctx,
        connect: () => {
          attempts++;
          return Promise.reject(e);
        },
      };
      await expect(waitAgentModule.run(bad, { timeout: 1800 })).rejects.toBe(e);
      expect(attempts).toBe(1);
    }
  });
  it('wait_agent in check mode tries once and does not wait', async () => {
    const { ctx } = fakeCtx([], {}, true);
    let attempts = 0;
    const once = { ...ctx, connect: () => Promise.reject(new Error(`refused ${++attempts}`)) };
    const r = await waitAgentModule.run(once, {});
    expect(r.msg).toMatch(/would wait up to 600s .*: no ramdisk answers now \(refused 1\); the run would boot it$/);
    // the SSH steps after it plan instead of connecting
    expect(r.tsbm_check_after_boot).toBe('no ramdisk answers now (refused 1); the run would boot it');
    expect(attempts).toBe(1);
  });

  it('wait_agent in check mode does not connect to a node that is Off, or that the run would power on', async () => {
    const { ctx } = fakeCtx([], {}, true);
    let attempts = 0;
    const counting = (vars: Record<string, unknown>) => ({
      ...ctx,
      vars: { ...ctx.vars, ...vars },
      connect: () => Promise.reject(new Error(`refused ${++attempts}`)),
    });
    const wouldPowerOn = { changed: true, power_state: 'Off', reset_type: 'On', system_uuid: 'u', mac_addresses: [] };
    const a = await waitAgentModule.run(counting({ power: wouldPowerOn }), { bmc_result: 'power' });
    expect(a.tsbm_check_after_boot).toBe('the run would power the node on first, PowerState Off now; check mode boots nothing');
    const off = await waitAgentModule.run(counting({ power: { changed: false, power_state: 'Off' } }), { bmc_result: 'power' });
    expect(off.tsbm_check_after_boot).toBe('the node is Off; check mode boots nothing');
    expect(attempts).toBe(0);
  });
});
