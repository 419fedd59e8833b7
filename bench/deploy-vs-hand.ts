// bench/deploy-vs-hand: `tsbm run playbooks/deploy-bootc.yml` against the same deploy done by
// hand (curl + ssh, the same steps, no checks: bench/lib/hand-deploy.ts), on the e2e lab: real
// sshd in network namespaces as ramdisks (each with a podman store of its own), podman, an
// htpasswd docker-registry, loop disks, and
// the project's fake BMC whose power changes take a set time. Both run in this one process tree
// on the same nodes, one after the other, from the same state (powered off, no media, the image
// not in podman's store) and with the same power delays (random ones replay per node from a
// seed). Prints, per case, the ratio of tsbm's wall time to the hand deploy's:
//   fixed delays:  tsbm wall / hand wall                       goal <= 1.05
//   random delays: tsbm wall / the slowest node's own hand time goal <= 1.05
// Root only (namespaces, loop devices). Usage:
//   node dist-bench/bench/deploy-vs-hand.js [--tsbm CHECKOUT] [--nodes 2,8] [--delays fixed,random]
//        [--fixed-ms 3000] [--random-ms 1000-11000] [--repeat N] [--explain]
// --tsbm measures another checkout's bin/tsbm.js and playbooks (a baseline) on this lab.
// --repeat N runs N hand/tsbm pairs per case and prints each pair's ratio and their median: on a
// 2-core machine a slow spell in one run moves a single ratio by a few hundredths.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { seededRandom } from '../src/util/seeded-random.js';
import { type BmcNode, startBmcNode } from '../test/e2e/lab/bmc-node.js';
import { buildStandinImage, pushImage, removeImage } from '../test/e2e/lab/image.js';
import { detachAll } from '../test/e2e/lab/loopdisk.js';
import { createNetns, destroyAllNetns } from '../test/e2e/lab/netns.js';
import { authJson, startRegistry } from '../test/e2e/lab/registry.js';
import { haveTool, isRoot, sh } from '../test/e2e/lab/run.js';
import { makeClientKey, stopAllSshd } from '../test/e2e/lab/sshd.js';
import { endSsh, type HandJob, type HandNode, handDeploy } from './lib/hand-deploy.js';

const root = resolve(import.meta.dirname, '..', '..');
const args = process.argv.slice(2);
const opt = (name: string, dflt: string): string => {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? dflt) : dflt;
};
const subject = resolve(opt('--tsbm', root));
const nodeCounts = opt('--nodes', '2,8').split(',').map(Number);
const delayKinds = opt('--delays', 'fixed,random').split(',') as Array<'fixed' | 'random'>;
const fixedMs = Number(opt('--fixed-ms', '3000'));
const [randMin, randMax] = opt('--random-ms', '1000-11000').split('-').map(Number) as [number, number];
/** Also print where each side spent its time (the slowest node's steps and tasks). */
const explain = args.includes('--explain');
const repeat = Math.max(1, Number(opt('--repeat', '1')) || 1);

const MiB = 1024 * 1024;
const DISK_MIB = 2048;
const BMC_PASSWORD = 'bench-bmc-Pa55';
const TOOLS = ['ip', 'nsenter', 'podman', 'docker-registry', 'htpasswd', 'sgdisk', 'sfdisk', 'partx', 'losetup', 'curl', 'ssh', 'genisoimage'];
const CONF_DIRS = ['/etc/containers/containers.conf.d', '/etc/containers/registries.conf.d'];

if (!isRoot || !TOOLS.every(haveTool)) {
  console.log(`deploy-vs-hand: skipped (needs root and ${TOOLS.join(', ')})`);
  process.exit(0);
}

/** ms per start of /bin/true, as bench/fleet prints it: how fast the machine is right now. */
function speedProbe(): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < 300; i++) spawnSync('/bin/true');
  return Number(process.hrtime.bigint() - t0) / 1e6 / 300;
}

/** Each node's power delays: fixed, or random per change from a seed replayed for every run. */
class Delays {
  private next: () => number = () => 0;
  constructor(private readonly index: number) {}
  set(kind: 'fixed' | 'random', caseSeed: number): void {
    if (kind === 'fixed') {
      this.next = () => fixedMs;
      return;
    }
    const rng = seededRandom(caseSeed * 100 + this.index);
    this.next = () => Math.round(randMin + rng() * (randMax - randMin));
  }
  ms = (): number => this.next();
}

function runAsync(argv: string[], env: NodeJS.ProcessEnv): Promise<{ rc: number; stdout: string; stderr: string; ms: number }> {
  const t0 = Date.now();
  return new Promise((res) => {
    const p = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    p.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    p.on('close', (rc) => res({ rc: rc ?? 128, stdout, stderr, ms: Date.now() - t0 }));
  });
}

const dir = mkdtempSync(join(tmpdir(), 'tsbm-deploy-vs-hand-'));
const confBefore = new Map(
  CONF_DIRS.flatMap((d) => (existsSync(d) ? readdirSync(d).map((f) => join(d, f)) : [])).map((f) => [f, readFileSync(f, 'utf8')]),
);
const TAG = `localhost/tsbm-bench-hand-${process.pid}`;
const nodes: BmcNode[] = [];
const delays: Delays[] = [];
let registryStop: (() => Promise<void>) | undefined;
let isoServer: ReturnType<typeof createServer> | undefined;
const rows: string[] = [];

/** A bench node's own podman store (its ramdisk's, in the lab). */
function storeOf(name: string): { root: string; run: string } {
  return { root: join(dir, `podman-${name}`, 'root'), run: join(dir, `podman-${name}`, 'run') };
}

function emptyStore(name: string): void {
  const s = storeOf(name);
  sh(['podman', '--root', s.root, '--runroot', s.run, 'rmi', '-a', '-f'], { allowFail: true });
}

async function main(): Promise<void> {
  const key = makeClientKey(join(dir, 'controller'));
  const regNs = createNetns('bhreg');
  const registry = await startRegistry(join(dir, 'registry'), regNs.hostIp, 5000 + (process.pid % 1000));
  registryStop = registry.stop;
  const max = Math.max(...nodeCounts);
  for (let i = 0; i < max; i++) {
    const d = new Delays(i);
    delays.push(d);
    // Each ramdisk a podman store of its own, as machines have: in one shared store the nodes'
    // pulls and podman commands would queue on its lock, and the first pull would serve the rest.
    const conf = join(dir, `storage-bh${i + 1}.conf`);
    const store = storeOf(`bh${i + 1}`);
    writeFileSync(conf, `[storage]\ndriver = "overlay"\ngraphroot = "${store.root}"\nrunroot = "${store.run}"\n`);
    nodes.push(
      await startBmcNode(`bh${i + 1}`, {
        dir,
        index: i + 1,
        diskBytes: DISK_MIB * MiB,
        authorizedKey: key.publicKey,
        bmcUser: 'admin',
        bmcPassword: BMC_PASSWORD,
        powerDelayMs: () => d.ms(),
        ramdiskEnv: { CONTAINERS_STORAGE_CONF: conf },
      }),
    );
  }
  buildStandinImage({ dir, tag: `${TAG}:bootc`, withBootc: true, allowedDevices: nodes.map((n) => n.disk.device) });
  const imageRef = `${registry.address}/standin:bootc`;
  pushImage(`${TAG}:bootc`, imageRef, registry.authFile);
  removeImage(`${TAG}:bootc`);
  const iso = join(dir, 'ramdisk.iso');
  writeFileSync(iso, Buffer.alloc(64 * 1024, 1));
  isoServer = createServer((_q, r) => r.end(readFileSync(iso)));
  await new Promise<void>((ok) => isoServer!.listen(0, '127.0.0.1', () => ok()));
  const isoUrl = `http://127.0.0.1:${(isoServer.address() as AddressInfo).port}/ramdisk.iso`;
  const pullSecret = Buffer.from(`${registry.user}:${registry.password}`).toString('base64');
  const userData = '#cloud-config\nhostname: bench\n';
  const metaData = (n: BmcNode) => ({ hostname: `${n.name}.lab`, public_keys: { controller: key.publicKey } });

  const inventory = (count: number): string => {
    const hosts: Record<string, unknown> = {};
    for (const n of nodes.slice(0, count)) {
      hosts[n.name] = {
        ssh_host: n.ns.nsIp,
        driver_info: { redfish_address: n.bmc.url, redfish_username: 'admin', redfish_password: BMC_PASSWORD, redfish_verify_ca: n.caFile },
        instance_info: {
          image_source: `oci://${imageRef}`,
          image_pull_secret: pullSecret,
          root_device: { name: n.disk.device },
          configdrive: { meta_data: metaData(n), user_data: userData },
        },
      };
    }
    const file = join(dir, `inventory-${count}.yml`);
    writeFileSync(
      file,
      stringify({
        all: {
          vars: {
            ssh_user: 'root',
            ssh_private_key_file: key.privateKeyFile,
            ssh_known_hosts_file: join(dir, 'known_hosts'),
            ssh_host_key_checking: 'accept-new',
            ramdisk_iso: iso,
            image_tls_verify: false,
            agent_min_memory_mib: 64,
            agent_timeout: 120,
          },
          children: { bench: { hosts } },
        },
      }),
    );
    return file;
  };
  writeFileSync(join(dir, 'known_hosts'), '');

  const handNode = (n: BmcNode): HandNode => {
    const sys = n.bmc.state.system;
    const reset = (sys.Actions as Record<string, { target: string }>)['#ComputerSystem.Reset']!.target;
    const slot = String(n.bmc.state.cdSlots()[0]!['@odata.id']);
    return {
      name: n.name,
      bmcUrl: n.bmc.url,
      bmcUser: 'admin',
      bmcPassword: BMC_PASSWORD,
      caFile: n.caFile,
      systemPath: n.bmc.state.systemPath,
      resetTarget: reset,
      cdSlot: slot,
      sshHost: n.ns.nsIp,
      device: n.disk.device,
      diskMiB: DISK_MIB,
    };
  };

  /** Every node as before a deploy: off, no media, no boot override, image not pulled. */
  const resetNodes = (count: number, kind: 'fixed' | 'random', seed: number) => {
    for (const [i, n] of nodes.slice(0, count).entries()) {
      emptyStore(n.name);
      n.sshd.stop();
      const sys = n.bmc.state.system;
      sys.PowerState = 'Off';
      sys.Boot = { ...(sys.Boot as object), BootSourceOverrideEnabled: 'Disabled', BootSourceOverrideTarget: 'None' };
      for (const s of n.bmc.state.cdSlots()) {
        s.Image = null;
        s.Inserted = false;
      }
      delays[i]!.set(kind, seed);
    }
  };

  const probe = speedProbe();
  const load = loadavg()[0] ?? 0;
  console.log(`deploy-vs-hand: ${subject === root ? 'this checkout' : subject} vs a hand deploy (curl + ssh, same steps, no checks)`);
  console.log(`  lab: real sshd in network namespaces, podman, htpasswd docker-registry, ${DISK_MIB} MiB loop disks, the fake BMC`);
  console.log(`  speed probe ${probe.toFixed(2)} ms per process start (lower is faster), load ${load.toFixed(1)} (1 min), ${readFileSync('/proc/cpuinfo', 'utf8').match(/^processor/gm)?.length ?? '?'} CPUs`);
  let seed = 1;
  for (const kind of delayKinds) {
    for (const count of nodeCounts) {
      seed++;
      const inv = inventory(count);
      const job: HandJob = {
        dir,
        privateKeyFile: key.privateKeyFile,
        imageRef,
        authJson: authJson(registry.address, registry.user, registry.password),
        isoUrl,
        metaData: {},
        userData,
      };
      const ratios: number[] = [];
      // Each pair from the same state, hand first, with the case's delays replayed.
      for (let rep = 0; rep < repeat; rep++) {
        resetNodes(count, kind, seed);
        const h0 = Date.now();
        const handSteps = nodes.slice(0, count).map(() => [] as Array<[string, number]>);
        const settled = await Promise.allSettled(nodes.slice(0, count).map((n, i) => handDeploy({ ...job, metaData: metaData(n) }, handNode(n), handSteps[i])));
        await Promise.all(nodes.slice(0, count).map((n) => endSsh(job, handNode(n))));
        const failed = settled.find((x): x is PromiseRejectedResult => x.status === 'rejected');
        if (failed) throw failed.reason;
        const handTimes = settled.map((x) => (x as PromiseFulfilledResult<number>).value);
        const handWall = Date.now() - h0;
        // the hand deploy did deploy: bootc's two partitions and the config drive on every disk
        for (const n of nodes.slice(0, count)) {
          const parts = (JSON.parse(sh(['sfdisk', '--json', n.disk.device]).stdout) as { partitiontable: { partitions?: unknown[] } }).partitiontable.partitions ?? [];
          if (parts.length !== 3) throw new Error(`the hand deploy left ${n.disk.device} with ${parts.length} partitions`);
        }
        resetNodes(count, kind, seed);
        const runDir = mkdtempSync(join(dir, 'run-'));
        const r = await runAsync(
          ['node', join(subject, 'bin', 'tsbm.js'), 'run', join(subject, 'playbooks', 'deploy-bootc.yml'), '-i', inv, '-f', String(count), '--output', 'json', '--journal-dir', join(runDir, 'runs')],
          { ...process.env, TSBM_LOCK_DIR: join(runDir, 'locks') },
        );
        if (r.rc !== 0) {
          console.log(`tsbm run exited ${r.rc}:\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-2000)}`);
          throw new Error('the tsbm run failed');
        }
        const slowestHand = Math.max(...handTimes);
        const base = kind === 'fixed' ? handWall : slowestHand;
        const what = kind === 'fixed' ? `fixed ${fixedMs} ms` : `random ${randMin}-${randMax} ms`;
        rows.push(
          `  ${what.padEnd(22)} ${String(count).padStart(5)}   ${(handWall / 1000).toFixed(1).padStart(9)} s   ${(slowestHand / 1000).toFixed(1).padStart(9)} s   ${(r.ms / 1000).toFixed(1).padStart(9)} s   ${(r.ms / base).toFixed(2).padStart(5)}x   ${kind === 'fixed' ? '<= 1.05x the hand wall time' : "<= 1.05x the slowest node's own hand time"}${repeat > 1 ? `   (pair ${rep + 1} of ${repeat})` : ''}`,
        );
        ratios.push(r.ms / base);
        console.log(rows.at(-1));
        console.log(`      hand per node: ${handTimes.map((t) => (t / 1000).toFixed(1)).join(', ')} s`);
        if (explain) {
          const slow = handTimes.indexOf(slowestHand);
          console.log(`      hand ${nodes[slow]!.name}: ${handSteps[slow]!.map(([s, ms]) => `${s} ${(ms / 1000).toFixed(1)}`).join(', ')}`);
          const ev = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { type: string; host?: string; task?: string; durationMs?: number; time: number });
          const per = new Map<string, { first: number; last: number }>();
          for (const e of ev) {
            if (!e.host || (e.type !== 'host_task_start' && e.type !== 'host_result')) continue;
            const p = per.get(e.host) ?? { first: e.time, last: e.time };
            p.first = Math.min(p.first, e.time);
            p.last = Math.max(p.last, e.time);
            per.set(e.host, p);
          }
          const [host] = [...per].sort((a, b) => b[1].last - b[1].first - (a[1].last - a[1].first))[0] ?? [];
          console.log(`      tsbm per node: ${[...per].map(([h, p]) => `${h} ${((p.last - p.first) / 1000).toFixed(1)}`).join(', ')} s (process start to first task ${((Math.min(...[...per.values()].map((p) => p.first)) - (ev[0]?.time ?? 0)) / 1000).toFixed(1)} s)`);
          console.log(`      tsbm ${host}: ${ev.filter((e) => e.type === 'host_result' && e.host === host).map((e) => `${e.task} ${((e.durationMs ?? 0) / 1000).toFixed(1)}`).join(', ')}`);
        }
      }
      if (repeat > 1) {
        const sorted = [...ratios].sort((a, b) => a - b);
        const median = sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
        const what = kind === 'fixed' ? `fixed ${fixedMs} ms` : `random ${randMin}-${randMax} ms`;
        rows.push(`  ${what.padEnd(22)} ${String(count).padStart(5)}   median of ${repeat} pairs ${median.toFixed(2)}x (${sorted[0]!.toFixed(2)}-${sorted.at(-1)!.toFixed(2)}x)`);
        console.log(rows.at(-1));
      }
    }
  }
  console.log('  power delays           nodes   hand wall   hand slowest node   tsbm wall   ratio   goal');
  for (const r of rows) console.log(r);
}

let cleaned = false;
async function cleanup(): Promise<void> {
  if (cleaned) return;
  cleaned = true;
  isoServer?.close();
  for (const n of nodes) await n.bmc.close().catch(() => {});
  stopAllSshd();
  await registryStop?.();
  destroyAllNetns();
  detachAll();
  removeImage(`${TAG}:bootc`);
  for (const n of nodes) emptyStore(n.name);
  // tsbm's pulls write podman drop-ins on the "ramdisk", which shares this machine's /etc
  for (const d of CONF_DIRS) {
    if (!existsSync(d)) continue;
    for (const f of readdirSync(d).map((x) => join(d, x))) {
      const before = confBefore.get(f);
      const now = readFileSync(f, 'utf8');
      if (now === before || !/written by tsbm/.test(now)) continue;
      if (before === undefined) rmSync(f, { force: true });
      else writeFileSync(f, before);
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

// Whatever happens, the namespaces, loop devices, sshds and the registry go.
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    void cleanup().finally(() => process.exit(130));
  });
}
try {
  await main();
} catch (e) {
  console.log(`deploy-vs-hand: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
