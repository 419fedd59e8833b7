// Runs in a fresh process (spawned by preflight-time.ts): tsbm run's checks before the first
// task on one playbook and inventory, as one run pays for them (cold: the first call in the
// process), split into loading (which a run did before the checks existed) and the checks
// themselves; then the checks again, warm, with how many per-host evaluations ran.
// Prints one JSON line. Usage: node preflight-child.js PLAYBOOK INVENTORY [REPEAT]
import type { RunOptions } from '../../src/executor/options.js';
import { preflightValidate } from '../../src/executor/preflight-validate.js';
import { validateLoaded } from '../../src/playbook/validate.js';
import { checkPattern, validateInventory } from '../../src/playbook/validate-inventory.js';

const [playbook, inventory, repeatArg] = process.argv.slice(2);
if (!playbook || !inventory) throw new Error('usage: preflight-child PLAYBOOK INVENTORY [REPEAT]');
const opts: RunOptions = {
  playbook,
  inventories: [inventory],
  tags: [],
  skipTags: [],
  extraVars: {},
  forks: 50,
  check: false,
  diff: false,
  listHosts: false,
  listTasks: false,
  listTags: false,
  syntaxCheck: false,
  output: 'plain',
  verbosity: 0,
};
const r = preflightValidate(opts);
if (!r.loaded) throw new Error(r.errors.map((e) => e.oneLine()).join('\n'));
const { playbook: pb, inventory: inv } = r.loaded;
const warm: number[] = [];
const stats = { evaluations: 0, reused: 0 };
for (let i = 0; i < Math.max(1, Number(repeatArg ?? 5)); i++) {
  const t = performance.now();
  validateLoaded(pb, [], { inventory: validateInventory(inv, pb.dir), checkPattern, ...(i === 0 ? { stats } : {}) });
  warm.push(performance.now() - t);
}
process.stdout.write(
  `${JSON.stringify({
    loadMs: r.timings.loadMs,
    checksColdMs: r.timings.checksMs,
    checksWarmMs: [...warm].sort((a, b) => a - b)[Math.floor((warm.length - 1) / 2)],
    errors: r.errors.length,
    hosts: inv.hosts.size,
    ...stats,
  })}\n`,
);
