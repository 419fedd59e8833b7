// wait_agent's ramdisk contract check against an in-process SSH "ramdisk" whose PATH holds
// only the programs a test gives it: every missing program named in one line, in the same one
// remote command as the identity probe, before anything else runs; check mode checks too.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSsh } from '../../src/connection/ssh.js';
import { waitAgentModule } from '../../src/modules/ramdisk/wait_agent.js';
import { shellExecHandler } from '../../packages/lab/src/ssh/exec.js';
import { scratchDirs } from '../helpers/scratch.js';
import { startSshHost } from '../helpers/ssh-host.js';
import { runModule, testContext } from '../helpers/ssh-module-context.js';

const scratch = scratchDirs();

/** Where this machine keeps `name` (the ramdisk's PATH gets a link to it). */
function which(name: string): string {
  for (const d of ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']) {
    const p = path.join(d, name);
    if (existsSync(p)) return p;
  }
  throw new Error(`test machine has no ${name}`);
}

const BOOTC_TOOLS = [
  'sh',
  'cat',
  'chmod',
  'mv',
  'rm',
  'wc',
  'sha256sum',
  'lsblk',
  'mkdir',
  'uname',
  'blockdev',
  'dd',
  'sfdisk',
  'partx',
  'sync',
];

/** A ramdisk whose PATH is one directory: links to this machine's `tools`, and a podman that tells its version. */
async function ramdisk(tools: string[], podmanVersion = '4.3.1') {
  const dir = scratch('tsbm-contract-');
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  for (const t of tools) {
    if (t === 'podman') {
      writeFileSync(
        path.join(bin, t),
        `#!/bin/sh\n[ "$1" = --version ] && echo "podman version ${podmanVersion}"\n`,
        { mode: 0o755 },
      );
    } else symlinkSync(which(t), path.join(bin, t));
  }
  const h = await startSshHost({ exec: shellExecHandler({ env: { PATH: bin, HOME: dir } }) });
  return { h, dir };
}

async function waitAgent(
  h: Awaited<ReturnType<typeof ramdisk>>['h'],
  args: Record<string, unknown>,
  vars = {},
  check = false,
) {
  const conn = await openSsh(h.spec);
  const t = testContext(conn, { vars, check, connect: () => openSsh(h.spec) });
  try {
    return {
      result: await runModule(waitAgentModule, t.ctx, { timeout: 5, interval: 1, identity: 'off', ...args }),
      logs: t.logs,
    };
  } finally {
    await conn.close();
  }
}

const withConfigDrive = { instance_info: { configdrive: { meta_data: { hostname: 'n' } } } };

describe('wait_agent checks the ramdisk contract of the deploy that follows', () => {
  it('a ramdisk lacking programs fails with one line naming each and the deploy, in one remote command', async () => {
    const { h } = await ramdisk(BOOTC_TOOLS.filter((t) => !['lsblk', 'sfdisk'].includes(t)).concat('podman'));
    try {
      const before = h.commands.length;
      const err = await waitAgent(h, { deploy: 'bootc' }, withConfigDrive).catch(
        (e: unknown) => e as Error & { hint?: string },
      );
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toBe(
        'node1: the ramdisk cannot do a bootc deploy: missing lsblk (root_device), sfdisk (configdrive_write, with instance_info.configdrive)',
      );
      expect((err as { hint?: string }).hint).toMatch(/docs\/ramdisk\.md/);
      // The identity probe, the contract and podman's version: one command line.
      expect(h.commands.length - before).toBe(1);
      expect(h.commands.at(-1)).toContain('command -v');
    } finally {
      await h.close();
    }
  });

  it('podman older than 4.0 fails the bootc deploy; a complete ramdisk passes and lists what optional it lacks', async () => {
    const old = await ramdisk([...BOOTC_TOOLS, 'podman'], '3.4.4');
    try {
      await expect(waitAgent(old.h, { deploy: 'bootc' })).rejects.toThrow(
        /node1: the ramdisk cannot do a bootc deploy: podman 3\.4\.4 is older than 4\.0$/,
      );
    } finally {
      await old.h.close();
    }
    const ok = await ramdisk([...BOOTC_TOOLS, 'podman']);
    try {
      const { result, logs } = await waitAgent(ok.h, { deploy: 'bootc' }, withConfigDrive);
      expect(result.failed).toBeFalsy();
      expect(result.ramdisk_contract).toEqual({
        deploy: 'bootc',
        missing_optional: ['ip', 'skopeo', 'getenforce', 'sgdisk'],
      });
      expect(result.podman_version).toBe('podman version 4.3.1');
      // No getenforce: bootc_install learns there is no SELinux from this probe, not its own.
      // With the architecture (and MemAvailable, when min_memory_mib reads it): podman_pull's
      // memory check then needs no round trip of its own.
      expect(result.facts).toEqual({ ramdisk_podman_version: 'podman version 4.3.1', ramdisk_selinux: 'absent', ramdisk_arch: execFileSync('uname', ['-m'], { encoding: 'utf8' }).trim() });
      expect(logs.join('\n')).toMatch(/lacks optional ip \(no identity by MAC address/);
    } finally {
      await ok.h.close();
    }
    const enforcing = await ramdisk([...BOOTC_TOOLS, 'podman']);
    try {
      writeFileSync(path.join(enforcing.dir, 'bin', 'getenforce'), '#!/bin/sh\necho Enforcing\n', { mode: 0o755 });
      const { result } = await waitAgent(enforcing.h, { deploy: 'bootc' }, withConfigDrive);
      expect((result.facts as Record<string, unknown>).ramdisk_selinux).toBe('Enforcing');
    } finally {
      await enforcing.h.close();
    }
  });

  it("an erase-only ramdisk (no podman) passes undeploy.yml's check and fails a bootc deploy's", async () => {
    const { h } = await ramdisk(['sh', 'cat', 'lsblk', 'blockdev', 'partx', 'dd', 'cmp']);
    try {
      const r = await waitAgent(h, { deploy: 'undeploy' });
      expect(r.result.failed).toBeFalsy();
      expect(r.result.ramdisk_contract).toEqual({ deploy: 'undeploy', missing_optional: ['ip', 'wipefs'] });
      await expect(waitAgent(h, { deploy: 'bootc' })).rejects.toThrow(/cannot do a bootc deploy: missing .*podman/);
    } finally {
      await h.close();
    }
  });

  it('check mode checks too; image and ramdisk deploys ask for their own programs; no deploy, no check', async () => {
    const { h } = await ramdisk(['sh', 'cat']);
    try {
      await expect(
        waitAgent(h, { deploy: 'image' }, { instance_info: { image_disk_format: 'qcow2' } }, true),
      ).rejects.toThrow(
        /cannot do an image deploy: missing lsblk \(root_device\), mkdir \(image_write\), rm \(image_write\), curl .*, qemu-img \(image_write, with instance_info.image_disk_format: qcow2\)/,
      );
      const r = await waitAgent(h, { deploy: 'ramdisk' });
      expect(r.result.ramdisk_contract).toEqual({ deploy: 'ramdisk', missing_optional: ['ip'] });
      const none = await waitAgent(h, {});
      expect(none.result.ramdisk_contract).toBeUndefined();
    } finally {
      await h.close();
    }
  });
});
