// Issue 8 end to end: `tsbm run playbooks/deploy-bootc.yml` against machines made of a
// network namespace with real sshd (the ramdisk), a loop disk, and the fake Redfish BMC; a
// real htpasswd registry serves a locally built image whose stand-in `bootc` lays out the
// disk. Four nodes deploy (their ramdisks: OpenSSH with SFTP, twice; OpenSSH without an sftp
// subsystem; dropbear without an sftp-server, its host key pinned by fingerprint); six more
// each fail one way, all in the same run: one at the controller's preflight (a pull secret the
// registry rejects), untouched; the others after the ramdisk boot, then powered off with their
// media ejected. Then undeploy.yml erases node1's loop disk (named by its root device hint) and
// no other.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseSfdiskJson } from '../../src/configdrive/partition-table.js';
import { sha256Fingerprint } from '../../src/connection/fingerprint.js';
import { type BmcNode, startBmcNode } from './lab/bmc-node.js';
import {
  STANDIN_ARGV_MAGIC,
  STANDIN_ROOT_OFFSET,
  buildStandinImage,
  pushImage,
  removeImage,
} from './lab/image.js';
import { detachAll, readAt } from './lab/loopdisk.js';
import { type Netns, createNetns, destroyAllNetns } from './lab/netns.js';
import { type Registry, startRegistry } from './lab/registry.js';
import { haveTool, isRoot, runCli, sh } from './lab/run.js';
import { type ClientKey, makeClientKey, stopAllSshd } from './lab/sshd.js';

const MiB = 1024 * 1024;
const built = existsSync('dist/cli/main.js') && existsSync('playbooks/deploy-bootc.yml');
const tools = [
  'ip',
  'nsenter',
  'podman',
  'docker-registry',
  'htpasswd',
  'sgdisk',
  'sfdisk',
  'losetup',
  'isoinfo',
];
const ready = isRoot && built && [...tools, 'dropbear', 'dropbearkey', 'unshare'].every(haveTool);
/** The nodes that deploy, and the SSH server their ramdisk runs. */
const GOOD = ['node1', 'node2', 'nosftp', 'dropbear'] as const;
const BMC_PASSWORD = 'bmc-Pa55-e2e-secret';
const TAG = `localhost/tsbm-deploy-e2e-${process.pid}`;
const WRONG_UUID = '0badc0de-0000-4000-8000-00000000e2e0';
const CONF_DIRS = ['/etc/containers/containers.conf.d', '/etc/containers/registries.conf.d'];


interface Event {
  type: string;
  host?: string;
  task?: string;
  status?: string;
  msg?: string;
  result?: Record<string, unknown>;
}

describe.skipIf(!ready)(
  'deploy-bootc end to end (needs root, `npm run build`, podman, docker-registry, sgdisk, isoinfo)',
  { timeout: 600_000 },
  () => {
    let dir: string;
    let key: ClientKey;
    let regNs: Netns;
    let registry: Registry;
    const nodes = new Map<string, BmcNode>();
    let run: { status: number | null; stdout: string; stderr: string };
    let events: Event[] = [];
    let junit = '';
    let confBefore = new Map<string, string>();
    const pullSecret = () => Buffer.from(`${registry.user}:${registry.password}`).toString('base64');

    const node = (name: string) => nodes.get(name)!;
    const hostEvents = (host: string) => events.filter((e) => e.type === 'host_result' && e.host === host);
    /** Where a host fell: its first failure (rescued by the cleanup, which then fails the host again). */
    const failure = (host: string) =>
      hostEvents(host).find((e) => e.status === 'failed' || e.status === 'rescued' || e.status === 'unreachable');
    const lastFailure = (host: string) =>
      hostEvents(host).filter((e) => e.status === 'failed' || e.status === 'unreachable').at(-1);
    const diskUntouched = (n: BmcNode) => readAt(n.disk.device, 0, 4 * MiB).every((b) => b === 0);

    beforeAll(async () => {
      confBefore = new Map(
        CONF_DIRS.flatMap((d) => (existsSync(d) ? readdirSync(d).map((f) => join(d, f)) : [])).map((f) => [
          f,
          readFileSync(f, 'utf8'),
        ]),
      );
      dir = mkdtempSync(join(tmpdir(), 'tsbm-deploy-e2e-'));
      key = makeClientKey(join(dir, 'controller'));
      regNs = createNetns('dreg');
      registry = await startRegistry(join(dir, 'registry'), regNs.hostIp, 5000 + (process.pid % 1000));

      const common = { dir, authorizedKey: key.publicKey, bmcUser: 'admin', bmcPassword: BMC_PASSWORD };
      const specs: Array<[string, Partial<Parameters<typeof startBmcNode>[1]>]> = [
        ['node1', {}],
        ['node2', {}],
        ['nosftp', { ramdisk: 'openssh-nosftp' }],
        ['dropbear', { ramdisk: 'dropbear' }],
        ['badsecret', {}],
        ['nobootc', {}],
        ['tiny', { diskBytes: 700 * MiB }],
        ['wrongmac', { bmcMac: '52:54:00:de:ad:01' }],
        ['wronguuid', { ramdiskUuid: WRONG_UUID }],
        ['noagent', { neverBoots: true }],
      ];
      let i = 1;
      for (const [name, extra] of specs) {
        nodes.set(name, await startBmcNode(name, { ...common, index: i++, diskBytes: 2048 * MiB, ...extra }));
      }
      const loops = [...nodes.values()].map((n) => n.disk.device);
      buildStandinImage({ dir, tag: `${TAG}:bootc`, withBootc: true, allowedDevices: loops });
      buildStandinImage({ dir, tag: `${TAG}:nobootc`, withBootc: false, allowedDevices: loops });
      pushImage(`${TAG}:bootc`, `${registry.address}/standin:bootc`, registry.authFile);
      pushImage(`${TAG}:nobootc`, `${registry.address}/standin:nobootc`, registry.authFile);

      const hosts: Record<string, unknown> = {};
      for (const n of nodes.values()) {
        const image = n.name === 'nobootc' ? 'standin:nobootc' : 'standin:bootc';
        hosts[n.name] = {
          ssh_host: n.ns.nsIp,
          // Pinned: no known_hosts entry is needed or written for this ramdisk.
          ...(n.name === 'dropbear'
            ? { ssh_host_key_fingerprint: sha256Fingerprint(Buffer.from(n.sshd.hostKeyPub.split(/\s+/)[1] as string, 'base64')) }
            : {}),
          ...(n.name === 'node2' ? { bootc_extra_args: ['--karg=console=ttyS0,115200'] } : {}),
          driver_info: {
            redfish_address: n.bmc.url,
            redfish_username: 'admin',
            redfish_password: BMC_PASSWORD,
            redfish_verify_ca: n.caFile,
          },
          instance_info: {
            image_source: `oci://${registry.address}/${image}`,
            image_pull_secret:
              n.name === 'badsecret' ? Buffer.from('tester:wrong-password').toString('base64') : pullSecret(),
            root_device: { name: n.disk.device },
            ...(['node1', 'nosftp', 'dropbear'].includes(n.name) ? { bootc_authorized_keys: key.publicKey } : {}),
            configdrive: {
              meta_data: { hostname: `${n.name}.lab`, public_keys: { controller: key.publicKey } },
              network_data: { links: [{ id: 'eth0', type: 'phy', ethernet_mac_address: n.ns.mac }] },
              user_data: '#cloud-config\nhostname: {{ inventory_hostname }}\n',
            },
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
            image_tls_verify: false,
            agent_timeout: 25,
            agent_min_memory_mib: 64,
          },
          children: { lab: { hosts } },
        },
      };
      writeFileSync(join(dir, 'known_hosts'), '');
      // A local ISO: tsbm serves it to the BMCs, and the preflight checks that it is there.
      writeFileSync(join(dir, 'ramdisk.iso'), Buffer.alloc(64 * 1024, 1));
      writeFileSync(join(dir, 'inventory.yml'), stringify(inventory));
      // Async: the fake BMCs live in this process and must keep answering during the run.
      const r = await runCli(
        [
          'bin/tsbm.js',
          'run',
          'playbooks/deploy-bootc.yml',
          '-i',
          join(dir, 'inventory.yml'),
          '--output',
          'json',
          '--junit',
          join(dir, 'junit.xml'),
        ],
        480_000,
      );
      run = { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
      events = run.stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Event);
      junit = existsSync(join(dir, 'junit.xml')) ? readFileSync(join(dir, 'junit.xml'), 'utf8') : '';
      if (process.env.TSBM_E2E_SHOW) console.log(run.stdout, run.stderr);
    }, 580_000);

    afterAll(async () => {
      for (const n of nodes.values()) await n.bmc.close().catch(() => {});
      stopAllSshd();
      await registry?.stop();
      destroyAllNetns();
      detachAll();
      for (const t of [`${TAG}:bootc`, `${TAG}:nobootc`]) removeImage(t);
      if (registry) for (const t of ['bootc', 'nobootc']) removeImage(`${registry.address}/standin:${t}`);
      // The deploy writes podman drop-ins on the "ramdisk", which shares this machine's /etc.
      for (const d of CONF_DIRS) {
        if (!existsSync(d)) continue;
        for (const f of readdirSync(d).map((x) => join(d, x))) {
          const now = readFileSync(f, 'utf8');
          // Only what this run wrote: other test files may be using these directories too.
          const ours = (registry && now.includes(registry.address)) || /no_pivot_root/.test(now);
          const before = confBefore.get(f);
          if (!ours || now === before) continue;
          if (before === undefined) rmSync(f, { force: true });
          else writeFileSync(f, before);
        }
      }
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('the run ends with exit 2: the good nodes succeed, each broken node fails alone', () => {
      expect(run.status, run.stderr).toBe(2);
      for (const h of GOOD) expect(failure(h), JSON.stringify(failure(h))).toBeUndefined();
      for (const h of ['badsecret', 'nobootc', 'tiny', 'wrongmac', 'wronguuid', 'noagent']) {
        expect(failure(h), `${h} should fail`).toBeDefined();
      }
    });

    for (const name of GOOD) {
      it(`${name}: GPT with the stand-in's partitions and a config-2 partition in the last 64 MiB`, () => {
        const n = node(name);
        const t = parseSfdiskJson(sh(['sfdisk', '--json', n.disk.device]).stdout, n.disk.device);
        expect(t.label).toBe('gpt');
        const names = t.partitions.map((p) => p.name);
        expect(names).toEqual(['EFI-SYSTEM', 'root', 'config-2']);
        const rootP = t.partitions[1]!;
        expect(rootP.offsetBytes).toBe(STANDIN_ROOT_OFFSET);
        expect(rootP.sizeBytes).toBe((2048 - 768) * MiB); // --root-size = disk MiB - 768
        const cd = t.partitions[2]!;
        expect(cd.offsetBytes).toBeGreaterThanOrEqual(n.disk.sizeBytes - 66 * MiB);
        expect(cd.offsetBytes + cd.sizeBytes).toBeLessThanOrEqual(n.disk.sizeBytes);

        const iso = join(dir, `${name}.iso`);
        writeFileSync(iso, readAt(n.disk.device, cd.offsetBytes, 4 * MiB));
        expect(sh(['isoinfo', '-d', '-i', iso]).stdout).toContain('Volume id: config-2');
        const meta = JSON.parse(
          sh(['isoinfo', '-R', '-x', '/openstack/latest/meta_data.json', '-i', iso]).stdout,
        );
        expect(meta).toMatchObject({
          name,
          hostname: `${name}.lab`,
          public_keys: { controller: key.publicKey },
        });
        expect(typeof meta.uuid).toBe('string');
        expect(sh(['isoinfo', '-R', '-x', '/openstack/2012-08-10/user_data', '-i', iso]).stdout).toBe(
          `#cloud-config\nhostname: ${name}\n`,
        );
        const net = JSON.parse(
          sh(['isoinfo', '-J', '-x', '/openstack/latest/network_data.json', '-i', iso]).stdout,
        );
        expect(net.links[0].ethernet_mac_address).toBe(n.ns.mac);
      });

      it(`${name}: the stand-in bootc got IPA's flags and the node ends booting from disk`, () => {
        const n = node(name);
        const argv = readAt(n.disk.device, STANDIN_ROOT_OFFSET, 4096).toString('utf8').split('\n');
        expect(argv[0]).toBe(STANDIN_ARGV_MAGIC);
        const args = argv.slice(2, argv.indexOf('END'));
        expect(args).toContain('--wipe');
        expect(args).toContain('--skip-fetch-check');
        expect(args).toContain(`--root-size=${2048 - 768}M`);
        expect(args.at(-1)).toBe(n.disk.device);
        expect(args).toContain('--disable-selinux'); // no getenforce on this "ramdisk"
        if (name !== 'node2') expect(args.some((a) => a.startsWith('--root-ssh-authorized-keys'))).toBe(true);
        else expect(args.some((a) => a.startsWith('--root-ssh-authorized-keys'))).toBe(false);
        if (name === 'node2') expect(args).toContain('--karg=console=ttyS0,115200');
        expect(n.boots[0]).toBe('cd');
        expect(n.boots.at(-1)).not.toBe('cd');
        expect(n.sshd.running()).toBe(false);
      });
    }

    it('wrong pull secret: the preflight asks the real registry and refuses the node before power-off', () => {
      const f = failure('badsecret')!;
      expect(f.task).toBe('Check the node before touching it (BMC, image, ISO)');
      expect(f.msg).toMatch(/registry \S+ refused the pull secret for standin \(UNAUTHORIZED/);
      expect(f.msg).not.toContain('registry: registry');
      expect(node('badsecret').bmc.state.resets).toEqual([]);
      expect(node('badsecret').boots).toEqual([]);
      expect(diskUntouched(node('badsecret'))).toBe(true);
    });

    it('the good nodes passed the preflight: manifest resolved with Basic auth over plain HTTP (image_tls_verify: false)', () => {
      for (const h of ['node1', 'node2']) {
        const pre = hostEvents(h).find((e) => e.task === 'Check the node before touching it (BMC, image, ISO)');
        expect(pre?.status, h).toBe('ok');
        expect(pre?.msg).toMatch(/image \S+\/standin:bootc resolves \(sha256:/);
        expect(pre?.msg).toMatch(/ramdisk_iso \S+ramdisk\.iso \(65536 bytes\)/);
      }
    });

    // (The DMTF tree's second CD slot holds media of its own from the start: only ours counts.)
    it('nodes that failed after the ramdisk boot end powered off, media ejected, and the message says so', () => {
      for (const h of ['nobootc', 'tiny', 'wrongmac', 'wronguuid', 'noagent']) {
        const last = lastFailure(h)!;
        expect(last.task, h).toBe('Report the failure');
        expect(last.msg, h).toMatch(/node powered off, virtual media ejected \(on_deploy_failure: power_off\) after "/);
        expect(last.msg, h).toContain(failure(h)!.task);
        const n = node(h);
        expect(n.bmc.state.powerState, h).toBe('Off');
        expect(n.bmc.state.cdSlots().some((x) => x.Inserted === true && String(x.Image).includes('ramdisk.iso')), h).toBe(false);
        expect(n.sshd.running(), h).toBe(false);
      }
    });

    it('an image without bootc: a clear "not a bootc image" error', () => {
      const f = failure('nobootc')!;
      expect(f.msg).toMatch(/bootc/i);
      expect(f.msg).toMatch(/not a bootc image|not found/i);
      expect(diskUntouched(node('nobootc'))).toBe(true);
    });

    it('a disk too small: refused with the sizes named', () => {
      const f = failure('tiny')!;
      expect(f.msg).toMatch(/too small/);
      expect(diskUntouched(node('tiny'))).toBe(true);
    });

    it('a ramdisk whose MAC does not match the BMC: refused before touching the disk, both values named', () => {
      const f = failure('wrongmac')!;
      expect(f.task).toMatch(/wait|ramdisk/i);
      expect(f.msg).toContain('52:54:00:de:ad:01');
      expect(f.msg?.toLowerCase()).toContain(node('wrongmac').ns.mac);
      expect(diskUntouched(node('wrongmac'))).toBe(true);
    });

    it('files reach ramdisks without SFTP piped over exec, and SFTP is used where the server has it', () => {
      const log = (name: string) => readFileSync(node(name).sshd.commandsLog, 'utf8');
      // Each piped put sends the transfer script (whose text names its status line): the
      // authorized keys here. The drop-ins and the auth file ride in the pull's own batch (the
      // auth file on its stdin), on every server alike.
      for (const name of ['nosftp', 'dropbear']) {
        expect(log(name).split('tsbm-put done').length - 1, name).toBeGreaterThanOrEqual(1);
      }
      for (const name of ['node1', 'nosftp', 'dropbear']) {
        expect(log(name), name).toMatch(/umask 077 && cat > "\$1"[^\n]*podman pull --authfile/);
        expect(log(name), name).toContain('zz-tsbm-ramdisk.conf');
      }
      expect(log('node1')).not.toContain('tsbm-put');
      expect(log('node1')).toContain('sftp-server');
      // dropbear accepted the SFTP request and ran a server that is not there: asked once.
      expect(log('dropbear').split('\n').filter((l) => l.endsWith('sftp-server'))).toHaveLength(1);
      // The pinned dropbear key was never written to known_hosts (the others were, accept-new).
      const kh = readFileSync(join(dir, 'known_hosts'), 'utf8');
      expect(kh.split('\n').filter(Boolean).length).toBeGreaterThan(0);
      expect(kh).not.toContain(node('dropbear').sshd.hostKeyPub.split(/\s+/)[1]);
    });

    it('the ramdisk contract passed on every good ramdisk before anything was written', () => {
      for (const h of GOOD) {
        const wait = hostEvents(h).find((e) => /ramdisk/i.test(e.task ?? '') && e.status === 'ok');
        expect(wait?.result?.ramdisk_contract, h).toMatchObject({ deploy: 'bootc' });
      }
    });

    it('identity: the good ramdisks matched their BMC by System UUID and MAC', () => {
      for (const h of GOOD) {
        const wait = hostEvents(h).find((e) => /ramdisk/i.test(e.task ?? '') && e.status === 'ok');
        expect(wait?.msg, h).toMatch(/uuid/i);
        expect(wait?.msg, h).not.toMatch(/no product_uuid/);
      }
    });

    it('a ramdisk whose System UUID does not match the BMC: refused before touching the disk, both values named', () => {
      const f = failure('wronguuid')!;
      expect(f.task).toMatch(/wait|ramdisk/i);
      expect(f.msg?.toLowerCase()).toContain(WRONG_UUID);
      expect(f.msg?.toLowerCase()).toContain(node('wronguuid').uuid.toLowerCase());
      expect(diskUntouched(node('wronguuid'))).toBe(true);
    });

    it('an agent that never comes up: a timeout with the elapsed time', () => {
      const f = failure('noagent')!;
      expect(f.msg).toMatch(/timed? ?out|did not (answer|accept SSH)|no answer/i);
      expect(f.msg).toMatch(/waited \d+(\.\d+)?\s*(s|seconds|min)\b/);
      expect(f.msg).toContain('connection refused');
      expect(diskUntouched(node('noagent'))).toBe(true);
    });

    it('undeploy.yml erases node1\'s loop disk (its root device hint) and only that disk; node1 ends off, ejected, override cleared', async () => {
      const n = node('node1');
      const other = node('node2');
      const otherBefore = sh(['sfdisk', '--json', other.disk.device]).stdout;
      const logBefore = existsSync(n.sshd.commandsLog) ? readFileSync(n.sshd.commandsLog, 'utf8').length : 0;
      const u = await runCli(
        ['bin/tsbm.js', 'run', 'playbooks/undeploy.yml', '-i', join(dir, 'inventory.yml'), '-l', 'node1', '--output', 'json'],
        240_000,
      );
      if (process.env.TSBM_E2E_SHOW) console.log(u.stdout, u.stderr);
      expect(u.status, u.stderr).toBe(0);
      // No partition table left, and zeros where the GPT copies and the partitions began.
      expect(sh(['sh', '-c', `sfdisk --json ${n.disk.device} >/dev/null 2>&1 && echo table || echo none`]).stdout.trim()).toBe('none');
      expect(sh(['wipefs', '--no-act', n.disk.device]).stdout.trim()).toBe('');
      expect(readAt(n.disk.device, 0, MiB).every((b) => b === 0)).toBe(true);
      expect(readAt(n.disk.device, n.disk.sizeBytes - MiB, MiB).every((b) => b === 0)).toBe(true);
      expect(readAt(n.disk.device, STANDIN_ROOT_OFFSET, 4096).every((b) => b === 0)).toBe(true);
      // The ramdisk wrote to node1's loop device and to no other device.
      const cmds = readFileSync(n.sshd.commandsLog, 'utf8').slice(logBefore);
      const written = [...cmds.matchAll(/of=(\/dev\/\S+?)['" ]/g)].map((m) => m[1]);
      expect(written.length).toBeGreaterThan(0);
      expect(new Set(written)).toEqual(new Set([n.disk.device]));
      expect(sh(['sfdisk', '--json', other.disk.device]).stdout).toBe(otherBefore);
      expect(n.bmc.state.powerState).toBe('Off');
      expect(n.bmc.state.cdSlots().some((x) => x.Inserted === true && String(x.Image).includes('ramdisk.iso'))).toBe(false);
      const boot = n.bmc.state.system.Boot as Record<string, unknown>;
      expect(boot.BootSourceOverrideEnabled).toBe('Disabled');
    }, 300_000);

    it('the pull secret file is gone and no secret appears in any output', () => {
      const secrets = [
        registry.password,
        pullSecret(),
        BMC_PASSWORD,
        Buffer.from(BMC_PASSWORD).toString('base64'),
      ];
      for (const s of secrets) {
        expect(run.stdout.includes(s), 'stdout').toBe(false);
        expect(run.stderr.includes(s), 'stderr').toBe(false);
        expect(junit.includes(s), 'junit').toBe(false);
      }
      // every command line the "ramdisks" ran (logged by their sshd)
      for (const n of nodes.values()) {
        const cmds = existsSync(n.sshd.commandsLog) ? readFileSync(n.sshd.commandsLog, 'utf8') : '';
        if (n.name !== 'noagent' && n.name !== 'badsecret') expect(cmds, `${n.name} ran commands`).not.toBe('');
        for (const s of secrets) expect(cmds.includes(s), `${n.name} remote argv`).toBe(false);
      }
      // Each node's secret directory is its own under /run/tsbm: look inside them all.
      const left = sh(['sh', '-c', "find /run/tsbm -name '*auth*' 2>/dev/null || true"]).stdout.trim();
      expect(left).toBe('');
      // the run journal, wherever tsbm keeps it
      const journals = sh(['sh', '-c', 'ls -d .tsbm/runs 2>/dev/null || true']).stdout.trim();
      if (journals) {
        const all = sh(['sh', '-c', `cat ${journals}/*/* 2>/dev/null || true`]).stdout;
        for (const s of secrets) expect(all.includes(s), 'journal').toBe(false);
      }
    });
  },
);
