// Runs a loaded playbook: run_start .. plays .. recap, run_end; SIGINT handling; cleanup of
// connections and run services whatever happens. Returns the exit code.
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { EXIT, optionsError, TsbmError } from '../errors.js';
import type { HostStats } from '../output/events.js';
import type { Play, Playbook, TaskNode } from '../playbook/model.js';
import { playNodes, playTags, staticTasks } from '../playbook/static-tasks.js';
import { didYouMean } from '../schema/did-you-mean.js';
import { ConnectionPool } from './connection-pool.js';
import type { EngineDeps } from './deps.js';
import { DEFAULT_FORKS, type ExecutorTuning, type RunOptions } from './options.js';
import type { RunRuntime } from './play-runtime.js';
import { playHosts, runPlay } from './play-runner.js';
import { RunState } from './run-state.js';
import { Interrupted } from './task-status.js';
import { settleNodes } from './settle.js';
import type { NodeEnd } from '../output/host-outcome.js';
import { Semaphore } from '../util/semaphore.js';
import { tasksBefore } from './start-at.js';
import { unmatchedTags } from './tags.js';
import { RunServicesImpl } from './services.js';
import { tsbmVersion } from '../util/version.js';


export async function executePlaybook(
  playbook: Playbook,
  opts: RunOptions,
  deps: EngineDeps,
  tuning: ExecutorTuning = {},
): Promise<number> {
  const started = Date.now();
  const { bus, redactor } = deps;
  redactor.addFromVars(opts.extraVars);
  const state = new RunState();
  const hooks = deps.hooks;
  if (hooks?.restore || hooks?.staysFailed) {
    state.onNewHost = (h) => {
      const saved = hooks.restore?.(h.name);
      if (saved) {
        redactor.addFromVars(saved);
        Object.assign(h.facts, saved);
      }
      // Failed in the run this one resumes: it stays failed, and no play runs it.
      const failure = hooks.staysFailed?.(h.name);
      if (failure !== undefined) {
        h.everFailed = true;
        h.failure = failure;
      }
    };
  }
  checkLimit(deps, opts.limit);
  if (opts.startAtTask !== undefined) {
    checkStartAtTask(playbook, opts.startAtTask);
    state.startAtTask = opts.startAtTask;
  }
  const abort = new AbortController();
  const interrupt = new AbortController();
  // one listener per running task; forks may be in the hundreds
  setMaxListeners(0, abort.signal, interrupt.signal);
  const services = new RunServicesImpl(playbook.dir);
  const pool = new ConnectionPool(deps.connect);
  const rt: RunRuntime = {
    deps,
    bus,
    redactor,
    inventory: deps.inventory,
    state,
    services,
    pool,
    forks: new Semaphore(Math.max(1, opts.forks || DEFAULT_FORKS)),
    check: opts.check,
    diff: opts.diff,
    rebuild: opts.rebuild === true,
    partial: opts.tags.length > 0 || opts.skipTags.length > 0 || opts.startAtTask !== undefined,
    forceHandlers: opts.forceHandlers === true,
    verbosity: opts.verbosity,
    extraVars: opts.extraVars,
    tags: opts.tags,
    skipTags: opts.skipTags,
    playbookDir: playbook.dir,
    taskAbort: abort.signal,
    interrupt: interrupt.signal,
    ...(tuning.untilDelayMs !== undefined ? { untilDelayMs: tuning.untilDelayMs } : {}),
    invVars: new Map(),
    scanned: new WeakSet(),
    nodeFacts: new Map(),
    lastPlay: new Map(),
  };

  // SIGINT: stop scheduling now; running tasks get a grace period, then their signal aborts.
  let grace: NodeJS.Timeout | undefined;
  const onInterrupt = () => {
    state.interrupted = true;
    bus.emit({ type: 'warning', time: Date.now(), message: 'interrupted: no new tasks will start; waits stop now, running steps that change nodes may finish' });
    interrupt.abort(new Interrupted('interrupted (Ctrl-C)'));
    grace = setTimeout(() => abort.abort(new Interrupted('interrupted: the grace period after Ctrl-C ended')), tuning.interruptGraceMs ?? 10_000);
  };
  if (deps.signal?.aborted) onInterrupt();
  else deps.signal?.addEventListener('abort', onInterrupt, { once: true });

  bus.emit({
    type: 'run_start',
    time: started,
    runId: deps.runId ?? randomUUID(),
    playbook: playbook.file,
    version: tsbmVersion(),
    // Extra vars by name only: their values may be secrets not yet known to be secrets.
    options: { ...opts, extraVars: Object.keys(opts.extraVars) } as Record<string, unknown>,
  });

  warnUnmatchedTags(playbook, opts, (message) => bus.emit({ type: 'warning', time: Date.now(), message }));

  let code: number = EXIT.ok;
  let nodeEnds: Record<string, NodeEnd> = {};
  try {
    for (const [i, play] of playbook.plays.entries()) {
      if (state.interrupted || state.runStop !== undefined) {
        // Plays the run did not reach: their hosts did not get to the end of the playbook.
        const why = state.fatal ? `the run stopped before play "${play.name}": ${state.fatal.message}` : `interrupted before play "${play.name}"`;
        for (const p of playbook.plays.slice(i)) for (const h of playHosts(rt, p, opts.limit, opts.shard)) state.leave(h, why);
        break;
      }
      await runPlay(rt, play, opts.limit, opts.shard);
    }
    nodeEnds = await settleNodes(rt);
  } catch (e) {
    // An engine bug or an operator error outside any task (e.g. a bad host pattern).
    code = e instanceof TsbmError ? e.exitCode : EXIT.unexpected;
    const msg = e instanceof TsbmError ? e.oneLine() : `internal error: ${e instanceof Error ? e.stack : String(e)}`;
    bus.emit({ type: 'warning', time: Date.now(), message: msg });
  } finally {
    deps.signal?.removeEventListener('abort', onInterrupt);
    if (grace) clearTimeout(grace);
    await pool.closeAll();
    await services.close((e) =>
      bus.emit({ type: 'warning', time: Date.now(), message: `cleanup failed: ${(e as Error).message}` }),
    );
  }

  const stats: Record<string, HostStats> = {};
  for (const [h, s] of state.hosts) stats[h] = { ...s.stats };
  const hs = [...state.hosts.values()];
  if (code === EXIT.ok) {
    if (state.fatal) code = state.fatal instanceof TsbmError ? state.fatal.exitCode : EXIT.error;
    else if (state.interrupted) code = EXIT.interrupted;
    else if (hs.some((h) => h.everUnreachable)) code = EXIT.unreachableOrParse;
    else if (hs.some((h) => h.everFailed)) code = EXIT.hostFailed;
  }
  const durationMs = Date.now() - started;
  const hosts = state.ends();
  for (const [h, node] of Object.entries(nodeEnds)) if (hosts[h]) hosts[h] = { ...hosts[h]!, node };
  bus.emit({ type: 'recap', time: Date.now(), stats, durationMs, hosts });
  // `unfinished` as well as the recap's outcomes: journals are read by older versions too.
  const unfinished = Object.keys(hosts).filter((h) => hosts[h]!.outcome === 'unfinished').sort();
  bus.emit({ type: 'run_end', time: Date.now(), exitCode: code, durationMs, ...(unfinished.length ? { unfinished } : {}) });
  return code;
}

/** A --tags or --skip-tags value no task carries: a warning naming the tags there are. */
function warnUnmatchedTags(playbook: Playbook, opts: RunOptions, warn: (message: string) => void): void {
  if (opts.tags.length === 0 && opts.skipTags.length === 0) return;
  const known = new Set(playbook.plays.flatMap((p) => [...playTags(p)]));
  const miss = unmatchedTags(opts, known);
  const names = [...known].filter((t) => t !== 'always' && t !== 'never').sort();
  const listed = names.length ? `the tags it has: ${names.join(', ')}` : 'it has no tags';
  const dynamic = playbook.plays.some(hasInclude) ? '; tasks of include_tasks files are not counted' : '';
  for (const [flag, list, effect] of [
    ['--tags', miss.tags, 'selects nothing'],
    ['--skip-tags', miss.skipTags, 'skips nothing'],
  ] as const) {
    for (const t of list) {
      const near = didYouMean(t, names);
      warn(`${flag} ${JSON.stringify(t)} matches no task of this playbook, so it ${effect}${near ? ` (did you mean "${near}"?)` : ''}; ${listed}${dynamic}`);
    }
  }
}

/** ansible-playbook's rule: a --limit that leaves no host of the inventory is an error. */
function checkLimit(deps: EngineDeps, limit: string | undefined): void {
  if (limit === undefined || deps.inventory.select(limit).length > 0) return;
  throw new TsbmError('runtime', `--limit ${JSON.stringify(limit)} matches no host in the inventory: nothing to do`, {
    hint: 'check the names with `tsbm inventory -i INVENTORY --graph`',
  });
}

/** --start-at-task naming no task would silently run nothing: refuse before touching a host. */
function checkStartAtTask(playbook: Playbook, pattern: string): void {
  if (playbook.plays.some((p) => tasksBefore(p, pattern).found || hasInclude(p))) return;
  const names = playbook.plays.flatMap((p) => staticTasks(playNodes(p))).flatMap((t) => (t.name ? [t.name] : []));
  const near = didYouMean(pattern, names);
  throw optionsError(
    `--start-at-task: no task named "${pattern}" in ${playbook.file}`,
    near ? `did you mean "${near}"?` : 'see --list-tasks for the task names',
  );
}


/** Tasks from include_tasks are only known at run time; a start task may be among them. */
function hasInclude(p: Play): boolean {
  const walk = (nodes: readonly TaskNode[]): boolean =>
    nodes.some((n) => n.kind === 'include_tasks' || (n.kind === 'block' && walk([...n.block, ...n.rescue, ...n.always])));
  return walk(playNodes(p));
}
