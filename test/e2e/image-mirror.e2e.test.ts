// One image pull per fleet (issue 25): three machines (real sshd ramdisks in namespaces, each
// with a podman store of its own, loop disks, the fake BMC) deploy one bootc image from a real
// docker-registry with token auth, as quay.io or Harbor serve one. First each node pulls from the
// registry itself (image_download_source: http): its access log shows every blob sent three
// times. Then through the controller's image mirror (image_download_source: local), which tsbm
// fills once for the fleet: every blob is sent once; the ramdisks never see the registry's
// credentials, the mirror's files are gone after the run.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type BmcNode, startBmcNode } from './lab/bmc-node.js';
import { buildStandinImage, pushImageAsync, removeImage } from './lab/image.js';
import { detachAll } from './lab/loopdisk.js';
import { type Netns, createNetns, destroyAllNetns } from './lab/netns.js';
import { haveTool, isRoot, runCli, sh } from './lab/run.js';
import { type ClientKey, makeClientKey, stopAllSshd } from './lab/sshd.js';
import { startTokenRegistry, type TokenRegistry } from './lab/token-registry.js';

const MiB = 1024 * 1024;
const built = existsSync('dist/cli/main.js');
const ready = isRoot && built && ['ip', 'nsenter', 'podman', 'docker-registry', 'sgdisk', 'sfdisk', 'losetup', 'openssl'].every(haveTool);
const NODES = ['m1', 'm2', 'm3'];
const TAG = `localhost/tsbm-mirror-e2e-${process.pid}`;
const CONF_DIRS = ['/etc/containers/containers.conf.d', '/etc/containers/registries.conf.d'];
const BMC_PASSWORD = 'bmc-mirror-e2e-Pa55';


describe.skipIf(!ready)('image_download_source: local pulls a bootc image once per fleet (needs root, podman, docker-registry, openssl)', { timeout: 900_000 }, () => {
  let dir: string;
  let key: ClientKey;
  let regNs: Netns;
  let upstream: TokenRegistry;
  const nodes: BmcNode[] = [];
  let confBefore = new Map<string, string>();
  const direct = { run: { status: null as number | null, stdout: '', stderr: '' }, blobs: new Map<string, number>() };
  const mirrored = { run: { status: null as number | null, stdout: '', stderr: '' }, blobs: new Map<string, number>() };
  let mirrorDirsDuring: string[] = [];
  const storageOf = (n: string) => join(dir, `podman-${n}`);

  /** Every node as before a deploy: off, no media, no boot override, an empty podman store. */
  const reset = () => {
    for (const n of nodes) {
      n.sshd.stop();
      n.bmc.state.system.PowerState = 'Off';
      n.bmc.state.system.Boot = { ...(n.bmc.state.system.Boot as object), BootSourceOverrideEnabled: 'Disabled', BootSourceOverrideTarget: 'None' };
      for (const s of n.bmc.state.cdSlots()) {
        s.Image = null;
        s.Inserted = false;
      }
      sh(['podman', '--root', join(storageOf(n.name), 'root'), '--runroot', join(storageOf(n.name), 'run'), 'rmi', '-a', '-f'], { allowFail: true });
    }
  };

  const deploy = async (source: 'http' | 'local', into: typeof direct) => {
    reset();
    const before = upstream.blobGets();
    // The second deploy goes over nodes the first left active (their records say so): a rebuild,
    // asked for as an operator must. Node records and locks stay in this test's directory.
    const r = await runCli(
      [
        'bin/tsbm.js', 'run', 'playbooks/deploy-bootc.yml', '-i', join(dir, 'inventory.yml'), '--output', 'plain', '-e', `image_download_source=${source}`,
        '--journal-dir', join(dir, `runs-${source}`), '--lock-dir', join(dir, 'locks'), ...(source === 'local' ? ['--rebuild'] : []),
      ],
      600_000,
    );
    into.run = { status: r.status, stdout: r.stdout, stderr: r.stderr };
    for (const [d, n] of upstream.blobGets()) into.blobs.set(d, n - (before.get(d) ?? 0));
    if (process.env.TSBM_E2E_SHOW) console.log(r.stdout, r.stderr);
  };

  beforeAll(async () => {
    confBefore = new Map(
      CONF_DIRS.flatMap((d) => (existsSync(d) ? readdirSync(d).map((f) => join(d, f)) : [])).map((f) => [f, readFileSync(f, 'utf8')]),
    );
    dir = mkdtempSync(join(tmpdir(), 'tsbm-mirror-e2e-'));
    key = makeClientKey(join(dir, 'controller'));
    regNs = createNetns('mreg');
    upstream = await startTokenRegistry(join(dir, 'upstream'), regNs.hostIp, 5400 + (process.pid % 500));
    let i = 1;
    for (const name of NODES) {
      // Each ramdisk its own podman store, as machines have: a shared one would hold the image
      // after the first pull and hide every later transfer.
      const conf = join(dir, `storage-${name}.conf`);
      writeFileSync(conf, `[storage]\ndriver = "overlay"\ngraphroot = "${join(storageOf(name), 'root')}"\nrunroot = "${join(storageOf(name), 'run')}"\n`);
      nodes.push(
        await startBmcNode(name, {
          dir,
          index: i++,
          diskBytes: 2048 * MiB,
          authorizedKey: key.publicKey,
          bmcUser: 'admin',
          bmcPassword: BMC_PASSWORD,
          ramdiskEnv: { CONTAINERS_STORAGE_CONF: conf },
        }),
      );
    }
    buildStandinImage({ dir, tag: `${TAG}:bootc`, withBootc: true, allowedDevices: nodes.map((n) => n.disk.device) });
    await pushImageAsync(`${TAG}:bootc`, `${upstream.address}/standin:bootc`, upstream.authFile);
    const hosts: Record<string, unknown> = {};
    for (const n of nodes) {
      hosts[n.name] = {
        ssh_host: n.ns.nsIp,
        driver_info: { redfish_address: n.bmc.url, redfish_username: 'admin', redfish_password: BMC_PASSWORD, redfish_verify_ca: n.caFile },
        instance_info: {
          image_source: `oci://${upstream.address}/standin:bootc`,
          image_pull_secret: Buffer.from(`${upstream.user}:${upstream.password}`).toString('base64'),
          root_device: { name: n.disk.device },
        },
      };
    }
    writeFileSync(join(dir, 'known_hosts'), '');
    writeFileSync(join(dir, 'ramdisk.iso'), Buffer.alloc(64 * 1024, 1));
    writeFileSync(
      join(dir, 'inventory.yml'),
      stringify({
        all: {
          vars: {
            ssh_user: 'root',
            ssh_private_key_file: key.privateKeyFile,
            ssh_known_hosts_file: join(dir, 'known_hosts'),
            ssh_host_key_checking: 'accept-new',
            ramdisk_iso: join(dir, 'ramdisk.iso'),
            image_tls_verify: false,
            agent_timeout: 60,
            agent_min_memory_mib: 64,
            // where the ramdisks reach the controller: the machine side of a lab namespace
            image_mirror_address: regNs.hostIp,
          },
          children: { lab: { hosts } },
        },
      }),
    );
    await deploy('http', direct);
    const watch = setInterval(() => {
      const now = readdirSync(tmpdir()).filter((f) => f.startsWith('tsbm-mirror-') && !f.startsWith('tsbm-mirror-e2e-'));
      if (now.length) mirrorDirsDuring = now;
    }, 200);
    await deploy('local', mirrored);
    clearInterval(watch);
  }, 880_000);

  afterAll(async () => {
    for (const n of nodes) await n.bmc.close().catch(() => {});
    stopAllSshd();
    await upstream?.stop();
    destroyAllNetns();
    detachAll();
    removeImage(`${TAG}:bootc`);
    for (const n of NODES) if (dir) sh(['podman', '--root', join(storageOf(n), 'root'), '--runroot', join(storageOf(n), 'run'), 'rmi', '-a', '-f'], { allowFail: true });
    for (const d of CONF_DIRS) {
      if (!existsSync(d)) continue;
      for (const f of readdirSync(d).map((x) => join(d, x))) {
        const now = readFileSync(f, 'utf8');
        const before = confBefore.get(f);
        if (now === before || !/written by tsbm/.test(now) || !(upstream && now.includes(upstream.address)) && !/no_pivot_root/.test(now)) continue;
        if (before === undefined) rmSync(f, { force: true });
        else writeFileSync(f, before);
      }
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('both deploys succeed on all three nodes', () => {
    expect(direct.run.status, direct.run.stdout.slice(-3000)).toBe(0);
    expect(mirrored.run.status, mirrored.run.stdout.slice(-3000)).toBe(0);
    expect(mirrored.run.stdout).toMatch(/ok: \[m1\] Check the node before touching it .*image mirror for [\d.:]+ on 10\.231\.\d+\.1:\d+/);
    // The memory check takes the size the controller read when it filled the mirror: no probe
    // from the ramdisk (podman 4's manifest inspect cannot log in to the mirror).
    expect(`${mirrored.run.stdout}${mirrored.run.stderr}`).not.toMatch(/memory preflight skipped/);
  });

  it('pulling from the registry itself: each node fetches every blob (3 transfers each)', () => {
    expect(direct.blobs.size).toBeGreaterThanOrEqual(2); // the config and the layer
    for (const [digest, n] of direct.blobs) expect(n, digest).toBe(NODES.length);
  });

  it('through the mirror: every blob leaves the registry once for the fleet', () => {
    expect([...mirrored.blobs.keys()].sort()).toEqual([...direct.blobs.keys()].sort());
    for (const [digest, n] of mirrored.blobs) expect(n, digest).toBe(1);
  });

  it("the ramdisks never saw the registry's credentials; the mirror's files are gone after the run", () => {
    for (const n of nodes) {
      const log = readFileSync(n.sshd.commandsLog, 'utf8');
      expect(log).not.toContain(upstream.password);
      expect(log).not.toContain(Buffer.from(`${upstream.user}:${upstream.password}`).toString('base64'));
    }
    expect(mirroredRunMentionsNoSecret()).toBe(true);
    expect(mirrorDirsDuring.length).toBeGreaterThan(0); // it was there during the run
    for (const d of mirrorDirsDuring) expect(existsSync(join(tmpdir(), d)), d).toBe(false);
  });

  function mirroredRunMentionsNoSecret(): boolean {
    return !`${mirrored.run.stdout}${mirrored.run.stderr}`.includes(upstream.password);
  }
});
