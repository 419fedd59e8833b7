// bench/fleet: deploys 10, 100 and 1000 simulated nodes with playbooks/deploy-bootc.yml. The lab
// runs in its own process (`tsbm sim up`); the runner is measured alone: wall time, CPU time
// (user + sys) and peak RSS, and the growth ratio 1000/100. With --repeat N each size runs N
// times (a fresh lab each time) and the table shows the median run and the range: these VMs'
// speed varies by several percent from one minute to the next. For each run it also prints what
// tsbm run's checks before the first task cost on that lab's inventory (bench/lib/preflight-time:
// the checks' own time in a fresh process, cold as in a run and warm, and as a share of the
// deploy's wall time), and what the run cost each deployed node, counted by the lab: requests its
// BMC answered and SSH execs (round trips) its ramdisk ran; numbers that should only go down.
// Usage: node dist-bench/bench/fleet.js [--repeat N] [--tsbm PATH] [sizes...]   (default 10 100 1000, once)
// --tsbm runs another checkout's bin/tsbm.js and playbooks (a baseline) against this checkout's lab.
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { measure } from './lib/measure.js';
import { timePreflight } from './lib/preflight-time.js';

const root = resolve(import.meta.dirname, '..', '..');
const tsbm = join(root, 'bin', 'tsbm.js');
const args = process.argv.slice(2);
const tsbmAt = args.indexOf('--tsbm');
/** The checkout whose runner and playbooks are measured (default: this one). */
const subject = tsbmAt >= 0 ? resolve(args.splice(tsbmAt, 2)[1] ?? root) : root;
const repeatAt = args.indexOf('--repeat');
const repeat = repeatAt >= 0 ? Math.max(1, Number(args.splice(repeatAt, 2)[1]) || 1) : 1;
const sizes = args.map(Number).filter((n) => n > 0);
const plan = (sizes.length ? sizes : [10, 100, 1000]).flatMap((n) => Array.from({ length: repeat }, () => n));

interface Row {
  n: number;
  wallS: number;
  cpuS: number;
  rssMiB: number;
  ok: boolean;
  /** The machine-speed probe just before this run (ms per process start). */
  probeMs: number;
  /** What the checks before the first task added to the run (cold, ms), and the checks alone (warm, ms). */
  checksAddedMs?: number;
  checksMs?: number;
  /** Per deployed node (mean): BMC requests, SSH execs. */
  bmcPerNode?: number;
  execsPerNode?: number;
  /** The load average (1 min) just before the run: the machine is shared. */
  load: number;
}

/** Mean BMC requests and SSH execs per deployed node (booted to disk), from `tsbm sim status`. */
function costs(dir: string): { bmcPerNode: number; execsPerNode: number } | undefined {
  const out = execFileSync('node', [tsbm, 'sim', 'status', '--json', '--dir', dir], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const rows = JSON.parse(out) as Array<{ lastBoot?: string | null; bmcRequests?: number; sshExecs?: number }>;
  const deployed = rows.filter((r) => r.lastBoot === 'Hdd');
  if (deployed.length === 0) return undefined;
  const sum = (f: (r: (typeof rows)[number]) => number) => deployed.reduce((a, r) => a + f(r), 0) / deployed.length;
  return { bmcPerNode: sum((r) => r.bmcRequests ?? 0), execsPerNode: sum((r) => r.sshExecs ?? 0) };
}

/**
 * How fast the machine is right now: ms per start of /bin/true, the kind of work that dominates
 * a simulated deploy. These VMs drift by 10-30% over minutes; the probe shows which runs were
 * made in a slow spell (same code, higher probe, longer wall time).
 */
function speedProbe(): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < 300; i++) spawnSync('/bin/true');
  return Number(process.hrtime.bigint() - t0) / 1e6 / 300;
}
const rows: Row[] = [];
/**
 * Where the lab keeps its nodes' files (sandboxes, sparse disks): RAM, as a real ramdisk does,
 * when /dev/shm is there. On these VMs the root ext4 has no journal, so ext4 makes every new
 * file skip inodes deleted in the last minutes: a lab creating and deleting thousands of files
 * ran ~5% slower there, for reasons that are the host's, not tsbm's. The runner's own journal
 * and node locks stay on disk (the system temp directory), as an operator's would.
 */
function labParent(): string {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

for (const n of plan) {
  const probeMs = speedProbe();
  const load = loadavg()[0] ?? 0;
  const dir = mkdtempSync(join(labParent(), `tsbm-fleet-lab-${n}-`));
  const runDir = mkdtempSync(join(tmpdir(), `tsbm-fleet-run-${n}-`));
  try {
    try {
      execFileSync('node', [tsbm, 'sim', 'up', '--nodes', String(n), '--dir', dir, '--boot-delay', '200', '--power-delay', '50'], {
        stdio: 'inherit',
      });
    } catch {
      rows.push({ n, wallS: 0, cpuS: 0, rssMiB: 0, ok: false, probeMs, load });
      continue;
    }
    const m = measure([
      'node', join(subject, 'bin', 'tsbm.js'), 'run', join(subject, 'playbooks', 'deploy-bootc.yml'), '-i', join(dir, 'inventory.yml'),
      '--output', 'plain', '-f', String(Math.min(n, 1000)), '--journal-dir', join(runDir, 'runs'),
    ], { env: { ...process.env, TSBM_LOCK_DIR: join(runDir, 'locks') } });
    const ok = m.status === 0;
    if (!ok) console.log(`n=${n}: tsbm run exited ${m.status}\n${m.output.slice(-3000)}`);
    const checks = timePreflight(join(root, 'playbooks', 'deploy-bootc.yml'), join(dir, 'inventory.yml'), 1);
    rows.push({
      n,
      wallS: m.wallS,
      cpuS: m.cpuS,
      rssMiB: m.peakRssMiB,
      ok,
      probeMs,
      load,
      checksAddedMs: checks.checksColdMs,
      checksMs: checks.checksWarmMs,
      ...(costs(dir) ?? {}),
    });
  } finally {
    execFileSync('node', [tsbm, 'sim', 'down', '--dir', dir], { stdio: 'inherit' });
    rmSync(dir, { recursive: true, force: true });
    rmSync(runDir, { recursive: true, force: true });
  }
}

console.log(`fleet: deploy-bootc.yml against the simulated lab (lab in its own process, its files in ${labParent()})${repeat > 1 ? `, ${repeat} runs per size` : ''}${subject !== root ? `; runner and playbooks from ${subject}` : ''}`);
console.log(
  '  nodes    wall s   runner CPU s   runner peak RSS MiB   result   BMC requests/node   SSH execs/node   speed probe ms   load (1 min)   checks before the run: cold ms (% of wall), warm ms',
);
const checksText = (r: Row) =>
  r.checksAddedMs === undefined
    ? ''
    : `   ${r.checksAddedMs.toFixed(0)} ms (${((r.checksAddedMs / 10 / Math.max(r.wallS, 0.001))).toFixed(1)}%), ${r.checksMs!.toFixed(0)} ms`;
const fmt = (r: Row) =>
  `  ${String(r.n).padStart(5)}  ${r.wallS.toFixed(1).padStart(7)}  ${r.cpuS.toFixed(1).padStart(13)}  ${r.rssMiB.toFixed(0).padStart(20)}   ${(r.ok ? 'ok' : 'FAILED').padEnd(6)}   ${(r.bmcPerNode?.toFixed(1) ?? '-').padStart(17)}   ${(r.execsPerNode?.toFixed(1) ?? '-').padStart(14)}   ${r.probeMs.toFixed(2).padStart(14)}   ${r.load.toFixed(1).padStart(12)}${checksText(r)}`;
for (const r of rows) console.log(fmt(r));
/** The run with the median wall time of a size (all of them failed: none). */
function median(n: number): Row | undefined {
  const ok = rows.filter((r) => r.n === n && r.ok).sort((x, y) => x.wallS - y.wallS);
  return ok[Math.floor((ok.length - 1) / 2)];
}
if (repeat > 1) {
  console.log('  median run per size (range of wall times):');
  for (const n of [...new Set(rows.map((r) => r.n))]) {
    const m = median(n);
    const walls = rows.filter((r) => r.n === n && r.ok).map((r) => r.wallS);
    if (m) console.log(`${fmt(m)}   ${Math.min(...walls).toFixed(1)}–${Math.max(...walls).toFixed(1)} s`);
  }
}
const a = median(100);
const b = median(1000);
if (a && b) console.log(`  growth 1000/100: ${(b.wallS / a.wallS).toFixed(1)}x wall (target < 12x); 1000 nodes target < 60 s wall, < 1024 MiB RSS`);
