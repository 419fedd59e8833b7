// Issue 7 end to end: `tsbm run playbooks/deploy-image.yml` against machines made of a network
// namespace with real sshd (the ramdisk), a loop disk and the fake Redfish BMC. The test builds
// a raw GPT image (and a qcow2 of it with Debian's qemu-img) and serves it over HTTP on the
// machine side of a veth. In one run: two raw deploys (one URL with credentials), a qcow2
// deploy, a wrong checksum, three nodes through the controller cache, and a 2 GiB sparse raw
// image whose ramdisk-side pipeline must stay under 100 MB of RSS.
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseSfdiskJson } from '../../src/configdrive/partition-table.js';
import {
  buildGptImage,
  type ImageServer,
  MARKER,
  MARKER_OFFSET,
  serveFiles,
  type TestImage,
} from '../helpers/image-fixture.js';
import { type BmcNode, startBmcNode } from './lab/bmc-node.js';
import { detachAll, readAt } from './lab/loopdisk.js';
import { type Netns, createNetns, destroyAllNetns } from './lab/netns.js';
import { haveTool, isRoot, runCli, sh } from './lab/run.js';
import { type ClientKey, makeClientKey, stopAllSshd } from './lab/sshd.js';

const MiB = 1024 * 1024;
const built = existsSync('dist/cli/main.js') && existsSync('playbooks/deploy-image.yml');
const tools = ['ip', 'nsenter', 'sgdisk', 'sfdisk', 'losetup', 'curl', 'qemu-img', 'isoinfo'];
const ready = isRoot && built && tools.every(haveTool);
const BMC_PASSWORD = 'bmc-Pa55-image-e2e';
const URL_PASSWORD = 'url-Cred-e2e-9x';

interface Event {
  type: string;
  host?: string;
  task?: string;
  status?: string;
  msg?: string;
  result?: Record<string, unknown>;
}


/** Hash of a loop disk's first `len` bytes, streamed through dd (no big buffers in the test). */
function diskSha(device: string, offset: number, len: number): string {
  return sh([
    'sh',
    '-c',
    `dd if="$1" bs=1M iflag=skip_bytes,count_bytes skip=$2 count=$3 status=none | sha256sum | cut -d' ' -f1`,
    'sh',
    device,
    String(offset),
    String(len),
  ]).stdout.trim();
}

function fileSha(file: string, offset: number, len: number): string {
  return sh([
    'sh',
    '-c',
    `dd if="$1" bs=1M iflag=skip_bytes,count_bytes skip=$2 count=$3 status=none | sha256sum | cut -d' ' -f1`,
    'sh',
    file,
    String(offset),
    String(len),
  ]).stdout.trim();
}

/** Peak RSS of the processes in one namespace, sampled from /proc while the run goes on. */
function watchNetnsRss(ns: Netns): {
  stop(): { peakSumKb: number; peakKb: Record<string, number>; seen: string[] };
} {
  const inode = sh(['stat', '-L', '-c', '%i', `/run/netns/${ns.name}`]).stdout.trim();
  const want = `net:[${inode}]`;
  const peakKb: Record<string, number> = {};
  const seen = new Set<string>();
  let peakSumKb = 0;
  const timer = setInterval(() => {
    let sum = 0;
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      try {
        if (readlinkSync(`/proc/${pid}/ns/net`) !== want) continue;
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        const name = /^Name:\s+(\S+)/m.exec(status)?.[1] ?? '?';
        if (name === 'sshd') continue; // the "ramdisk's" sshd is not the image pipeline
        const rss = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
        const hwm = Number(/^VmHWM:\s+(\d+)/m.exec(status)?.[1] ?? 0);
        sum += rss;
        seen.add(name);
        peakKb[name] = Math.max(peakKb[name] ?? 0, hwm);
      } catch {
        /* the process ended meanwhile */
      }
    }
    peakSumKb = Math.max(peakSumKb, sum);
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      return { peakSumKb, peakKb, seen: [...seen] };
    },
  };
}

describe.skipIf(!ready)(
  'deploy-image end to end (needs root, `npm run build`, sgdisk, losetup, curl, qemu-img, isoinfo)',
  { timeout: 900_000 },
  () => {
    let dir: string;
    let key: ClientKey;
    let srvNs: Netns;
    let server: ImageServer;
    let img: TestImage;
    let big: { file: string; sha256: string; size: number };
    const nodes = new Map<string, BmcNode>();
    let run: { status: number | null; stdout: string; stderr: string };
    let events: Event[] = [];
    let rss: ReturnType<ReturnType<typeof watchNetnsRss>['stop']>;

    const node = (name: string) => nodes.get(name)!;
    const hostEvents = (host: string) => events.filter((e) => e.type === 'host_result' && e.host === host);
    /** Where a host fell: its first failure (rescued by the cleanup, which then fails the host again). */
    const failure = (host: string) =>
      hostEvents(host).find((e) => e.status === 'failed' || e.status === 'rescued' || e.status === 'unreachable');
    const written = (host: string) =>
      hostEvents(host).find((e) => e.task === 'Write the image to the root disk');
    const dataLen = () => img.size - 2048 * 512 - 34 * 512;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'tsbm-image-e2e-'));
      key = makeClientKey(join(dir, 'controller'));
      img = buildGptImage(dir, 48, true);
      copyFileSync(img.raw, join(dir, 'disk-local.raw'));
      // 2 GiB sparse: a GPT and a marker, zeros in between (never allocated on the server side).
      const bigFile = join(dir, 'big.raw');
      sh(['truncate', '-s', '2G', bigFile]);
      sh(['sgdisk', '-n', '1:2048:+64M', '-t', '1:ef00', '-n', '2:0:0', bigFile]);
      sh([
        'sh',
        '-c',
        `printf %s "$1" | dd of="$2" bs=1 seek=$((1536*1024*1024)) conv=notrunc status=none`,
        'sh',
        MARKER,
        bigFile,
      ]);
      big = { file: bigFile, size: 2 * 1024 * MiB, sha256: sh(['sha256sum', bigFile]).stdout.split(' ')[0]! };

      srvNs = createNetns('isrv');
      server = await serveFiles([img.raw, img.qcow2!, join(dir, 'disk-local.raw'), bigFile], srvNs.hostIp);
      const common = { dir, authorizedKey: key.publicKey, bmcUser: 'admin', bmcPassword: BMC_PASSWORD };
      const names = ['raw1', 'raw2', 'badhash', 'qcow', 'loc1', 'loc2', 'loc3', 'big'];
      let i = 1;
      for (const name of names) {
        nodes.set(
          name,
          await startBmcNode(name, {
            ...common,
            index: i++,
            diskBytes: name === 'big' ? 2200 * MiB : 256 * MiB,
          }),
        );
      }
      // badhash starts with a bootable-looking table, which the failed deploy must not leave.
      sh(['sgdisk', '-n', '1:2048:+16M', '-t', '1:ef00', node('badhash').disk.device]);

      const u = server.url;
      const withCreds = u.replace('http://', `http://deploy:${URL_PASSWORD}@`);
      const info: Record<string, Record<string, unknown>> = {
        raw1: { image_source: `${u}/disk.raw`, image_os_hash_value: img.sha256 },
        raw2: {
          image_source: `${withCreds}/disk.raw`,
          image_os_hash_algo: 'sha512',
          image_os_hash_value: img.sha512,
        },
        badhash: { image_source: `${u}/disk.raw`, image_os_hash_value: 'b'.repeat(64) },
        qcow: {
          image_source: `${u}/disk.qcow2`,
          image_disk_format: 'qcow2',
          image_os_hash_value: img.qcow2Sha256,
        },
        loc1: { image_source: `${u}/disk-local.raw`, image_os_hash_value: img.sha256 },
        loc2: { image_source: `${u}/disk-local.raw`, image_os_hash_value: img.sha256 },
        loc3: { image_source: `${u}/disk-local.raw`, image_os_hash_value: img.sha256 },
        big: { image_source: `${u}/big.raw`, image_os_hash_value: big.sha256 },
      };
      const hosts: Record<string, unknown> = {};
      for (const n of nodes.values()) {
        hosts[n.name] = {
          ssh_host: n.ns.nsIp,
          ...(n.name.startsWith('loc') ? { image_download_source: 'local' } : {}),
          driver_info: {
            redfish_address: n.bmc.url,
            redfish_username: 'admin',
            redfish_password: BMC_PASSWORD,
            redfish_verify_ca: n.caFile,
          },
          instance_info: {
            ...info[n.name],
            root_device: { name: n.disk.device },
            ...(n.name === 'raw1'
              ? { configdrive: { meta_data: { hostname: 'raw1.lab' }, user_data: '#cloud-config\n' } }
              : {}),
          },
        };
      }
      const inventory = {
        all: {
          vars: {
            ssh_user: 'root',
            ssh_private_key_file: key.privateKeyFile,
            ssh_known_hosts_file: join(dir, 'known_hosts'),
            ssh_host_key_checking: 'accept-new',
            ramdisk_iso: join(dir, 'ramdisk.iso'),
            agent_timeout: 25,
            agent_min_memory_mib: 64,
            tsbm_http_address: srvNs.hostIp,
            image_cache_dir: join(dir, 'cache'),
          },
          children: { lab: { hosts } },
        },
      };
      writeFileSync(join(dir, 'known_hosts'), '');
      // A local ISO: tsbm serves it to the BMCs, and the preflight checks that it is there.
      writeFileSync(join(dir, 'ramdisk.iso'), Buffer.alloc(64 * 1024, 1));
      writeFileSync(join(dir, 'inventory.yml'), stringify(inventory));
      const watch = watchNetnsRss(node('big').ns);
      const r = await runCli(
        [
          'bin/tsbm.js',
          'run',
          'playbooks/deploy-image.yml',
          '-i',
          join(dir, 'inventory.yml'),
          '--output',
          'json',
          '--forks',
          '10',
          '-vvv',
        ],
        800_000,
      );
      rss = watch.stop();
      run = { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
      events = run.stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Event);
      if (process.env.TSBM_E2E_SHOW) console.log(run.stdout, run.stderr, rss);
    }, 880_000);

    afterAll(async () => {
      for (const n of nodes.values()) await n.bmc.close().catch(() => {});
      stopAllSshd();
      await server?.close();
      destroyAllNetns();
      detachAll();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('the run ends with exit 2: only the wrong checksum fails', () => {
      expect(run.status, run.stderr).toBe(2);
      for (const h of ['raw1', 'raw2', 'qcow', 'loc1', 'loc2', 'loc3', 'big'])
        expect(failure(h), JSON.stringify(failure(h))).toBeUndefined();
      expect(failure('badhash')?.task).toBe('Write the image to the root disk');
    });

    it('raw and qcow2 deploys leave the image bytes on the disk, read back from the device', () => {
      const want = fileSha(img.raw, 2048 * 512, dataLen());
      for (const h of ['raw1', 'raw2', 'qcow', 'loc1', 'loc2', 'loc3']) {
        const n = node(h);
        expect(diskSha(n.disk.device, 2048 * 512, dataLen()), h).toBe(want);
        expect(readAt(n.disk.device, MARKER_OFFSET, MARKER.length).toString(), h).toBe(MARKER);
        const t = parseSfdiskJson(sh(['sfdisk', '--json', n.disk.device]).stdout, n.disk.device);
        expect(t.label).toBe('gpt');
        expect(t.partitions.slice(0, 2).map((p) => p.name)).toEqual(['esp', 'root']);
      }
      expect(written('qcow')?.result?.disk_format).toBe('qcow2');
    });

    it('the GPT backup header moved to the disk end, and the config drive went into the freed space', () => {
      const n = node('raw1');
      const verify = sh(['sgdisk', '-v', n.disk.device], { allowFail: true }).stdout;
      expect(verify).toMatch(/No problems found/);
      const t = parseSfdiskJson(sh(['sfdisk', '--json', n.disk.device]).stdout, n.disk.device);
      const cd = t.partitions.find((p) => p.name === 'config-2');
      expect(cd).toBeDefined();
      expect(cd!.offsetBytes).toBeGreaterThanOrEqual(n.disk.sizeBytes - 66 * MiB);
      const iso = join(dir, 'raw1.iso');
      writeFileSync(iso, readAt(n.disk.device, cd!.offsetBytes, 2 * MiB));
      expect(sh(['isoinfo', '-d', '-i', iso]).stdout).toContain('Volume id: config-2');
      expect(node('raw1').boots.at(-1)).not.toBe('cd');
    });

    it('a wrong checksum fails the host naming both hashes, leaves no partition table, powers the node off', () => {
      const f = failure('badhash')!;
      expect(f.msg).toContain(img.sha256);
      expect(f.msg).toContain('b'.repeat(64));
      const n = node('badhash');
      const last = hostEvents('badhash').filter((e) => e.status === 'failed').at(-1);
      expect(last?.msg).toMatch(/node powered off, virtual media ejected \(on_deploy_failure: power_off\) after "Write the image to the root disk" failed/);
      expect(n.bmc.state.powerState).toBe('Off');
      expect(n.bmc.state.cdSlots().some((x) => x.Inserted === true && String(x.Image).includes('ramdisk.iso'))).toBe(false);
      expect(sh(['sfdisk', '--json', n.disk.device], { allowFail: true }).rc).not.toBe(0);
      expect(readAt(n.disk.device, 510, 2).toString('hex')).not.toBe('55aa');
    });

    it('image_download_source: local: three nodes, one upstream download', () => {
      expect(server.downloads('disk-local.raw')).toBe(1);
      const results = ['loc1', 'loc2', 'loc3'].map((h) => written(h)?.result ?? {});
      expect(results.filter((r) => r.cache_downloaded === true)).toHaveLength(1);
      expect(results.every((r) => typeof r.cache_file === 'string')).toBe(true);
    });

    it('a 2 GiB sparse raw image streams with the ramdisk pipeline under 100 MB RSS', () => {
      const n = node('big');
      expect(diskSha(n.disk.device, 0, big.size - 34 * 512).length).toBe(64);
      expect(readAt(n.disk.device, 1536 * MiB, MARKER.length).toString()).toBe(MARKER);
      expect(written('big')?.result?.bytes).toBe(big.size);
      // The sampler must have seen the pipeline, or the bound proves nothing.
      expect(rss.seen).toEqual(expect.arrayContaining(['dd', 'curl']));
      expect(rss.peakSumKb, JSON.stringify(rss)).toBeLessThan(100 * 1024);
    });

    it('no secret in any output or remote command line', () => {
      for (const s of [BMC_PASSWORD, URL_PASSWORD]) {
        expect(run.stdout.includes(s), 'stdout').toBe(false);
        expect(run.stderr.includes(s), 'stderr').toBe(false);
        for (const n of nodes.values()) {
          const cmds = existsSync(n.sshd.commandsLog) ? readFileSync(n.sshd.commandsLog, 'utf8') : '';
          expect(cmds.includes(s), `${n.name} remote argv`).toBe(false);
        }
      }
      expect(readFileSync(node('raw2').sshd.commandsLog, 'utf8')).toContain('TSBM_IMAGE_URL');
    });
  },
);
