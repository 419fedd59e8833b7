// bench/preflight: what tsbm run's checks before the first task cost as a fleet grows, without a
// lab: deploy-bootc.yml against the inventory a simulated lab of N nodes would write. Each size
// runs in a fresh process (cold: what one run pays), then warm; the peer is loading the playbook
// and inventory alone, which a run did before the checks existed. The growth ratio 1000/100
// shows whether the checks scale with hosts (they should not: hosts sharing variables share
// one evaluation per task).
// Usage: node dist-bench/bench/preflight.js [sizes...]   (default 10 100 1000 5000)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { previewInventory } from '../packages/lab/src/lab/lab.js';
import { type PreflightTime, timePreflight } from './lib/preflight-time.js';

const root = resolve(import.meta.dirname, '..', '..');
const playbook = join(root, 'playbooks', 'deploy-bootc.yml');
const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
const dir = mkdtempSync(join(tmpdir(), 'tsbm-bench-preflight-'));
const rows: Array<PreflightTime & { n: number }> = [];
try {
  for (const n of sizes.length ? sizes : [10, 100, 1000, 5000]) {
    const inv = join(dir, `inventory-${n}.yml`);
    writeFileSync(inv, previewInventory(join(dir, `lab-${n}`), n));
    rows.push({ n, ...timePreflight(playbook, inv) });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log("preflight: tsbm run's checks on deploy-bootc.yml, sim-shaped inventory of N hosts (ms; cold = first call in a fresh process, median of 3)");
console.log('  hosts   loading (peer, cold)   checks cold   checks/loading   checks warm   evaluations   hosts reusing one   errors');
for (const r of rows) {
  console.log(
    `  ${String(r.n).padStart(5)}  ${r.loadMs.toFixed(0).padStart(21)}  ${r.checksColdMs.toFixed(0).padStart(12)}  ${(r.checksColdMs / r.loadMs).toFixed(2).padStart(14)}x  ${r.checksWarmMs.toFixed(1).padStart(12)}  ${String(r.evaluations).padStart(12)}  ${String(r.reused).padStart(18)}   ${r.errors}`,
  );
}
const a = rows.find((r) => r.n === 100);
const b = rows.find((r) => r.n === 1000);
if (a && b) console.log(`  growth 1000/100, checks warm: ${(b.checksWarmMs / a.checksWarmMs).toFixed(1)}x for 10x the hosts`);
