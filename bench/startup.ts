// bench/startup: what `tsbm --version` and `tsbm --help` cost over starting node itself, beside
// ansible-playbook --version when it is installed. Medians of R runs each, ratios against node's
// own start, and the machine's speed probe (ms per /bin/true start). A start-up that loads a
// library it does not need shows here; the structural check (no node_modules loaded for
// --version) is a test in test/integration/cli-program.test.ts.
// Usage: node dist-bench/bench/startup.js [R]
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const R = Number(process.argv[2] ?? 15);
const bin = resolve(import.meta.dirname, '..', '..', 'bin', 'tsbm.js');

function medianMs(argv: string[]): number | undefined {
  const xs: number[] = [];
  for (let i = 0; i < R; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(argv[0]!, argv.slice(1), { stdio: 'ignore' });
    if (r.error) return undefined;
    xs.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  xs.sort((a, b) => a - b);
  return xs[Math.floor(xs.length / 2)];
}

function speedProbe(): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < 300; i++) spawnSync('/bin/true');
  return Number(process.hrtime.bigint() - t0) / 1e6 / 300;
}

const probe = speedProbe();
const node = medianMs([process.execPath, '-e', ''])!;
const rows: [string, number | undefined][] = [
  ['node -e ""', node],
  ['tsbm --version', medianMs([process.execPath, bin, '--version'])],
  ['tsbm --help', medianMs([process.execPath, bin, '--help'])],
  ['ansible-playbook --version', medianMs(['ansible-playbook', '--version'])],
];
console.log(`startup: median of ${R} runs; speed probe ${probe.toFixed(2)} ms per process start (lower is faster)`);
for (const [name, ms] of rows) {
  if (ms === undefined) console.log(`  ${name.padEnd(28)} not installed`);
  else console.log(`  ${name.padEnd(28)} ${ms.toFixed(1).padStart(7)} ms   ${(ms / node).toFixed(2)}x node's own start`);
}
