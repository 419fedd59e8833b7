// Self-test of the e2e lab: namespaces with real sshd reached by the system ssh client,
// podman over that SSH, the authenticated registry, and the stand-in bootc's refusal.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  STANDIN_ARGV_MAGIC,
  STANDIN_ROOT_OFFSET,
  buildStandinImage,
  pushImage,
  removeImage,
} from './lab/image.js';
import { createLoopDisk, detachAll, readAt } from './lab/loopdisk.js';
import { type Netns, createNetns, destroyAllNetns } from './lab/netns.js';
import { type Registry, startRegistry } from './lab/registry.js';
import { haveTool, isRoot, sh } from './lab/run.js';
import { type ClientKey, type Sshd, makeClientKey, prepareSshd, sshRun, stopAllSshd } from './lab/sshd.js';

const ready =
  isRoot && ['ip', 'nsenter', 'podman', 'docker-registry', 'htpasswd', 'sgdisk', 'losetup'].every(haveTool);
const TAG = `localhost/tsbm-lab-${process.pid}:bootc`;

describe.skipIf(!ready)(
  'e2e lab self-test (needs root, iproute2, openssh-server, podman, docker-registry)',
  { timeout: 180_000 },
  () => {
    let dir: string;
    let ns: Netns;
    let regNs: Netns;
    let sshd: Sshd;
    let key: ClientKey;
    let registry: Registry;
    let disk: ReturnType<typeof createLoopDisk>;
    let other: ReturnType<typeof createLoopDisk>;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'tsbm-lab-'));
      ns = createNetns('lab', 7);
      regNs = createNetns('labreg');
      key = makeClientKey(join(dir, 'client'));
      sshd = prepareSshd(ns, join(dir, 'sshd'), [key.publicKey], { logCommands: true });
      sshd.start();
      registry = await startRegistry(join(dir, 'registry'), regNs.hostIp, 5000 + (process.pid % 1000));
      disk = createLoopDisk(1024 * 1024 * 1024);
      other = createLoopDisk(256 * 1024 * 1024);
      buildStandinImage({ dir, tag: TAG, withBootc: true, allowedDevices: [disk.device] });
      pushImage(TAG, `${registry.address}/standin:bootc`, registry.authFile);
    });

    afterAll(async () => {
      stopAllSshd();
      await registry?.stop();
      destroyAllNetns();
      detachAll();
      removeImage(TAG);
      sh(['podman', 'rmi', '-f', `${registry?.address}/standin:bootc`], { allowFail: true });
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('sshd in the namespace answers the system ssh client; the namespace has the known MAC', () => {
      const r = sshRun(sshd, key, 'ip -j link show eth0');
      expect(JSON.parse(r.stdout)[0].address).toBe(ns.mac);
      expect(sshRun(sshd, key, 'echo $TSBM_TEST_HOST').stdout.trim()).toBe(ns.name);
      // every remote command line is logged for the tests that check argv for secrets
      expect(readFileSync(sshd.commandsLog, 'utf8')).toContain('echo $TSBM_TEST_HOST\n');
      expect(sshRun(sshd, key, "printf '%s|' a 'b c'").stdout).toBe('a|b c|');
    });

    it('podman runs a privileged container over that SSH', () => {
      const r = sshRun(
        sshd,
        key,
        `podman run --rm --privileged --pid=host -v /dev:/dev ${TAG} /bin/sh -c 'echo hello-from-container'`,
      );
      expect(r.stdout).toContain('hello-from-container');
    });

    it('the registry wants credentials; with the auth file a pull from the namespace works', () => {
      const ref = `${registry.address}/standin:bootc`;
      sh(['podman', 'rmi', '-f', ref], { allowFail: true });
      const denied = sshRun(sshd, key, `podman pull ${ref}`, true);
      expect(denied.rc).not.toBe(0);
      expect(denied.stderr).toMatch(/unauthorized|authentication required/i);
      const ok = sshRun(sshd, key, `podman pull --authfile ${registry.authFile} ${ref}`, true);
      expect(ok.stderr).toBe(ok.rc === 0 ? ok.stderr : 'pull should succeed');
    });

    it('the stand-in bootc refuses a device it was not given, and lays out its own loop disk', () => {
      const run = (dev: string) =>
        sshRun(
          sshd,
          key,
          `podman run --rm --privileged --pid=host --pull=never -v /dev:/dev ${TAG} bootc install to-disk --wipe --skip-fetch-check --root-size=256M ${dev}`,
          true,
        );
      const before = readAt(other.device, 0, 1024 * 1024);
      const refused = run(other.device);
      expect(refused.rc).not.toBe(0);
      expect(refused.stderr).toContain(`refusing to write ${other.device}`);
      expect(readAt(other.device, 0, 1024 * 1024).equals(before)).toBe(true);
      expect(run('/dev/tsbm-no-such-disk').stderr).toContain('refusing');

      const done = run(disk.device);
      expect(done.stderr).toBe(done.rc === 0 ? done.stderr : 'install should succeed');
      const pt = JSON.parse(sh(['sfdisk', '--json', disk.device]).stdout).partitiontable;
      expect(pt.label).toBe('gpt');
      expect(pt.partitions.map((p: { name: string }) => p.name)).toEqual(['EFI-SYSTEM', 'root']);
      expect(pt.partitions[1].start * 512).toBe(STANDIN_ROOT_OFFSET);
      expect(pt.partitions[1].size * 512).toBe(256 * 1024 * 1024);
      const argv = readAt(disk.device, STANDIN_ROOT_OFFSET, 4096).toString('utf8').split('\n');
      expect(argv[0]).toBe(STANDIN_ARGV_MAGIC);
      expect(argv).toContain('--skip-fetch-check');
      expect(argv).toContain('--root-size=256M');
    });
  },
);
