// Controller crash survival: the runner (`node bin/tsbm.js run deploy-bootc.yml`) is SIGKILLed
// at 20 random points of 5-node simulated deploys and resumed with `--resume last` until each
// deploy finishes. Every node must end deployed, bootc must have completed exactly once per node
// per deploy (a rerun only where a kill interrupted an install), every journal must stay
// readable by `tsbm runs show`, and no host lock may be left behind.
// The kill schedule comes from a seeded PRNG; the seed is printed, and TSBM_FAULT_SEED replays it.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJournal } from '../../src/journal/reader.js';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { type CliRun, DEPLOY, failuresOf, runTsbm, seededRandom, spawnTsbm, stateArgs, locksLeft } from '../helpers/fault-cli.js';
import { flushFaultRows, recordFault } from '../helpers/fault-table.js';

const SOURCE = 'resume-sigkill';
const NODES = 5;
const KILLS = 20;
const INSTALL = 'Install the image to the root disk';
const seed = Number(process.env.TSBM_FAULT_SEED) || Date.now() % 1_000_000;

const labs: { lab: Lab; dir: string }[] = [];
afterAll(async () => {
  for (const l of labs) {
    await l.lab.close();
    if (!process.env.TSBM_KEEP_FAULT_DIRS) rmSync(l.dir, { recursive: true, force: true });
  }
  flushFaultRows(SOURCE);
});

async function newLab(): Promise<{ lab: Lab; dir: string; state: ReturnType<typeof stateArgs> }> {
  const dir = mkdtempSync(join(tmpdir(), 'tsbm-sigkill-'));
  const lab = await startLab({ nodes: NODES, dir, bootDelayMs: 150, powerDelayMs: 30 });
  labs.push({ lab, dir });
  return { lab, dir, state: stateArgs(dir) };
}

const deployArgs = (lab: Lab, state: { args: string[] }, extra: string[] = []) => [
  'run',
  DEPLOY,
  '-i',
  lab.inventory,
  '--output',
  'json',
  ...state.args,
  ...extra,
];

const hasJournal = (dir: string) =>
  existsSync(join(dir, 'runs')) && readdirSync(join(dir, 'runs')).some((f) => f.endsWith('.jsonl') && readJournal(join(dir, 'runs', f)).header);

function explain(r: CliRun): string {
  return `exit ${r.code}; failures ${JSON.stringify([...failuresOf(r).values()].map((f) => [f.host, f.task, f.msg]))}; stderr ${r.stderr.slice(-800)}`;
}

/** Per node: bootc installs started and completed according to every journal of one deploy. */
function installsFromJournals(runsDir: string): Map<string, { started: number; completed: number }> {
  const out = new Map<string, { started: number; completed: number }>();
  for (const f of readdirSync(runsDir).filter((n) => n.endsWith('.jsonl'))) {
    for (const r of readJournal(join(runsDir, f)).records) {
      if ((r.type !== 'host_task_start' && r.type !== 'host_result') || r.task !== INSTALL) continue;
      const c = out.get(r.host) ?? { started: 0, completed: 0 };
      if (r.type === 'host_task_start') c.started++;
      else if (r.status === 'ok' || r.status === 'changed') c.completed++;
      out.set(r.host, c);
    }
  }
  return out;
}

/** Asserts the deploy's end state; returns how many extra bootc runs interrupted installs caused. */
async function assertDeployed(lab: Lab, dir: string): Promise<number> {
  let extra = 0;
  const installs = installsFromJournals(join(dir, 'runs'));
  for (const n of lab.nodes) {
    const layout = await n.diskLayout();
    expect(layout.partitions.map((p) => p.name), n.cfg.name).toEqual(['EFI-SYSTEM', 'root', 'config-2']);
    const count = Number(readFileSync(join(n.root, 'sim/bootc-count'), 'utf8').trim());
    const j = installs.get(n.cfg.name) ?? { started: 0, completed: 0 };
    // Exactly one recorded completion: a resume never re-ran an install it knew had finished.
    expect(j.completed, `${n.cfg.name} completed installs`).toBe(1);
    // The stand-in ran at least once, and more only for installs a kill cut off before their result.
    expect(count, `${n.cfg.name} bootc-count`).toBeGreaterThanOrEqual(1);
    expect(count - 1, `${n.cfg.name} extra bootc runs vs interrupted installs`).toBeLessThanOrEqual(j.started - j.completed);
    extra += count - 1;
  }
  // Every journal reads back through the CLI, and no lock outlives the runs.
  const runs = readdirSync(join(dir, 'runs')).filter((f) => f.endsWith('.jsonl'));
  const shows = await Promise.all(
    runs.map((f) => runTsbm(['runs', 'show', f.slice(0, -6), '--journal-dir', join(dir, 'runs'), '--json'], { cwd: dir, env: process.env })),
  );
  for (const s of shows) {
    expect(s.code, s.stderr).toBe(0);
    expect(JSON.parse(s.stdout).hosts.length).toBeGreaterThanOrEqual(0);
  }
  const locks = join(dir, 'locks');
  expect(locksLeft(locks)).toEqual([]);
  return extra;
}

describe('SIGKILL at random points, then --resume last', () => {
  let cleanMs = 0;

  it('measures one clean 5-node deploy', async () => {
    console.log(`resume-sigkill seed=${seed} (replay: TSBM_FAULT_SEED=${seed})`);
    const { lab, dir, state } = await newLab();
    const r = await runTsbm(deployArgs(lab, state), { cwd: dir, env: state.env });
    expect(r.code, explain(r)).toBe(0);
    cleanMs = r.ms;
    await assertDeployed(lab, dir);
  }, 120_000);

  /** One worker's share of the kill points: fresh 5-node deploys, each killed 1..5 times, then resumed to the end. */
  async function killAndResume(kills: number, rng: () => number) {
    const stats = { kills: 0, deploys: 0, resumes: 0, rerunInstalls: 0, points: [] as number[] };
    while (stats.kills < kills) {
      const { lab, dir, state } = await newLab();
      stats.deploys++;
      const budget = Math.min(kills - stats.kills, 1 + Math.floor(rng() * 5));
      let finished = false;
      for (let k = 0; k < budget && !finished; k++) {
        const resume = hasJournal(dir) ? ['--resume', 'last'] : [];
        if (resume.length) stats.resumes++;
        const running = spawnTsbm(deployArgs(lab, state, resume), { cwd: dir, env: state.env });
        const delay = Math.round(150 + rng() * cleanMs);
        const timer = setTimeout(() => running.child.kill('SIGKILL'), delay);
        const r = await running.done;
        clearTimeout(timer);
        if (r.signal === 'SIGKILL') {
          stats.kills++;
          stats.points.push(delay);
        } else {
          expect(r.code, explain(r)).toBe(0);
          finished = true;
        }
      }
      if (!finished) {
        const resume = hasJournal(dir) ? ['--resume', 'last'] : [];
        if (resume.length) stats.resumes++;
        const r = await runTsbm(deployArgs(lab, state, resume), { cwd: dir, env: state.env });
        expect(r.code, explain(r)).toBe(0);
      }
      stats.rerunInstalls += await assertDeployed(lab, dir);
    }
    return stats;
  }

  it(`kills the runner ${KILLS} times and every node still ends deployed exactly once`, async () => {
    expect(cleanMs).toBeGreaterThan(0);
    // Two labs side by side, each with its own PRNG stream from the seed, halve the wall time.
    const [a, b] = await Promise.all([killAndResume(KILLS / 2, seededRandom(seed * 2)), killAndResume(KILLS / 2, seededRandom(seed * 2 + 1))]);
    const kills = a.kills + b.kills;
    expect(kills).toBe(KILLS);
    recordFault(SOURCE, {
      fault: 'controller SIGKILL mid-deploy, then --resume last',
      how: `seed ${seed}: ${NODES}-node sim deploys, kills at random points in 150..${150 + cleanMs} ms (clean run ${cleanMs} ms)`,
      cases: kills,
      outcome: `${a.deploys + b.deploys} deploys, ${a.resumes + b.resumes} resumes: every node GPT + config-2, one completed install each (bootc re-ran ${a.rerunInstalls + b.rerunInstalls}x, only for installs a kill cut off), journals readable, no locks left`,
      result: 'pass',
    });
  }, 540_000);
});
