// One play: pick its hosts (pattern, --limit, hosts that failed earlier stay out), split
// them into serial batches, run each batch with the play's strategy, stop on the fail policy.
import { formatPos } from '../errors.js';
import { getModule } from '../modules/registry.js';
import type { Play, Task } from '../playbook/model.js';
import { runStopAfterBatch } from './batch-outcome.js';
import type { PlayRuntime, RunRuntime } from './play-runtime.js';
import { batches } from './serial.js';
import { inShard, type Shard } from './shard.js';
import { tasksBefore } from './start-at.js';
import { runFree } from './strategy-free.js';
import { runLinear } from './strategy-linear.js';
import { announceResume } from './resume-note.js';
import { enterPlay } from './play-entry.js';

export function playHosts(rt: RunRuntime, play: Play, limit: string | undefined, shard?: Shard): string[] {
  let hosts = rt.inventory.select(play.hosts).filter((h) => inShard(h, shard));
  if (limit) {
    const allowed = new Set(rt.inventory.select(limit));
    hosts = hosts.filter((h) => allowed.has(h));
  }
  return hosts;
}

/** `gather_facts: true` is a play keyword for a first task running the gather_facts module. */
function withFactGathering(rt: RunRuntime, play: Play): Play {
  if (!play.gatherFacts || !(rt.deps.modules ?? getModule)('gather_facts')) return play;
  const pos = play.keyPos.gather_facts ?? play.pos;
  const gather: Task = {
    kind: 'task',
    id: `${formatPos(pos)}:gather_facts`,
    name: 'Gathering Facts',
    module: 'gather_facts',
    args: {},
    argsPos: pos,
    pos,
    keyPos: {},
    when: [],
    tags: ['always'],
    vars: {},
    notify: [],
    baseDir: play.baseDir,
  };
  return { ...play, preTasks: [gather, ...play.preTasks] };
}

export async function runPlay(rt: RunRuntime, loaded: Play, limit: string | undefined, shard?: Shard): Promise<void> {
  // Its own handler list: include_role adds the handlers of the roles it loads at run time.
  const play = { ...withFactGathering(rt, loaded), handlers: [...loaded.handlers] };
  const targeted = playHosts(rt, play, limit, shard);
  const listed = targeted.filter((h) => {
    const s = rt.state.host(h);
    return !s.everFailed && !s.everUnreachable && !s.stopped;
  });
  rt.bus.emit({ type: 'play_start', time: Date.now(), play: play.name, hosts: listed, pos: play.pos, strategy: play.strategy });
  const hosts = await enterPlay(rt, play, listed, targeted);
  if (!hosts) return;
  rt.redactor.addFromVars(play.vars);
  for (const f of play.varsFiles) rt.redactor.addFromVars(f);

  let skipTasks = new Set<object>();
  if (rt.state.startAtTask !== undefined) {
    const r = tasksBefore(loaded, rt.state.startAtTask); // fact gathering still runs
    if (!r.found) return; // the start task is in a later play
    skipTasks = r.skip;
    rt.state.startAtTask = undefined;
  }
  const pr: PlayRuntime = {
    ...rt,
    play,
    playHosts: hosts,
    endPlay: false,
    skipTasks,
    runOnce: new Map(),
    started: new Set(),
    names: new Map(),
    includes: new Map(),
    magic: new Map(),
  };
  for (const h of rt.nodeFacts.keys()) if (targeted.includes(h)) rt.lastPlay.set(h, pr);
  announceResume(pr, hosts, targeted.filter((h) => !hosts.includes(h)));
  if (hosts.length === 0) {
    if (listed.length === 0) rt.bus.emit({ type: 'warning', time: Date.now(), message: `play '${play.name}': no hosts matched` });
    return;
  }
  for (const h of hosts) {
    const s = rt.state.host(h);
    s.failed = false;
    s.unreachable = false;
    s.ended = false;
    s.notified.clear();
  }
  const run = play.strategy === 'free' ? runFree : runLinear;
  const all = batches(hosts, play.serial);
  for (const [i, batch] of all.entries()) {
    if (pr.endPlay) break;
    // Batches the run stops before (interrupted, or a whole batch failed) never ran this play.
    const leaveRest = (from: number) => {
      const why = rt.state.interrupted ? 'interrupted before its serial batch' : `not started: play "${play.name}" stopped before its serial batch`;
      for (const h of all.slice(from).flat()) rt.state.leave(h, why);
    };
    if (rt.state.interrupted) {
      leaveRest(i);
      break;
    }
    // run_once runs once per batch, as Ansible's "on one host in each serial batch".
    pr.runOnce.clear();
    await run(pr, batch);
    const stop = runStopAfterBatch(pr, batch, i, all.length);
    if (stop) {
      leaveRest(i + 1);
      rt.state.runStop = stop;
      rt.bus.emit({ type: 'warning', time: Date.now(), message: stop });
      break;
    }
  }
}
