// Runs one task on one host: when, loop, until/retries, timeout, failed_when/changed_when,
// ignore_errors, register, notify, no_log, check mode, delegation. Returns the outcome the
// host walker needs; everything else goes out as events and into the host's state.
import { rerunNeeded } from './resume-plan.js';
import { inRescue } from './rescue-section.js';
import type { ConnectionSpec, ExecOptions } from '../connection/types.js';
import { formatPos, TsbmError } from '../errors.js';
import { getModule } from '../modules/registry.js';
import type { ModuleDef } from '../module-api/types.js';
import type { HostStatus } from '../output/events.js';
import { addCounts, type Counts, countsFor } from '../output/recap-counts.js';
import type { Task } from '../playbook/model.js';
import { evalCondition, renderValue } from '../template/index.js';
import type { TemplateContext } from '../template/types.js';
import type { Vars } from '../types.js';
import { sleep } from '../util/wait.js';
import { Interrupted, interruptedResult, isInterrupt, isUnreachable, NodeNotHeld, Stopped, statusOf, unreachableResult, walkOutcome } from './task-status.js';
import { LOCALHOST, localSpec } from './connection-pool.js';
import type { Outcome, TaskStep } from './host-walker.js';
import { type Effective, effectiveKeywords } from './keywords.js';
import { lazyVars } from './lazy-vars.js';
import { createModuleContext } from './module-context.js';
import type { PlayRuntime } from './play-runtime.js';
import {
  afterBootOf,
  censor,
  failedResult,
  hostVarsFrom,
  metaOf,
  normalizeResult,
  type Registered,
  skippedResult,
} from './result.js';
import { hostVars, taskVars } from './task-vars.js';
import { validateArgs } from './validate-args.js';

export const taskName = (t: Task): string => t.name ?? t.module;

/** Whether a task of this module may change the node it runs for (module-api's `changesNode`). */
const changesNode = (mod: ModuleDef | undefined): boolean => mod?.changesNode !== false;

interface Run {
  pr: PlayRuntime;
  step: TaskStep;
  task: Task;
  host: string;
  name: string;
  kw: Effective;
  noLog: boolean;
  /** Check mode for this task: --check, unless its check_mode keyword says otherwise. */
  check: boolean;
  started: number;
  /** Skipped because --resume found it done (its registered value was restored). */
  resumed?: boolean;
}

/** Runs `step` on `host` and records the result; never throws for task-level problems. */
export async function runTaskOnHost(pr: PlayRuntime, step: TaskStep, host: string): Promise<Outcome> {
  const task = step.task;
  const name = pr.names.get(step.key) ?? taskName(task);
  const started = Date.now();
  const kw = effectiveKeywords(pr.play, step.chain, task);
  const r: Run = { pr, step, task, host, name, kw, noLog: false, check: pr.check, started };
  let raw: Vars = {};
  let reg: Registered;
  const mod = (pr.deps.modules ?? getModule)(task.module);
  try {
    raw = taskVars(pr, host, step.chain, task);
    if (kw.checkMode !== undefined) {
      r.check = flag(r, kw.checkMode, raw);
      // ansible_check_mode tells the task what it is in, as in Ansible
      if (r.check !== pr.check) raw = { ...raw, ansible_check_mode: r.check, tsbm_check_mode: r.check };
    }
    r.noLog = flag(r, kw.noLog, raw);
    pr.bus.emit({
      type: 'host_task_start',
      time: Date.now(),
      host,
      task: name,
      taskId: task.id,
      args: r.noLog ? 'censored (no_log)' : task.args,
    });
    // A cleanup step (a rescue) of an earlier run is never done for a failure of this one.
    const completed = inRescue(step.chain, task) ? undefined : pr.deps.hooks?.completed;
    if (
      completed?.(host, task.id) &&
      (kw.resume !== 'rerun' || !rerunNeeded(pr.play, task, host, completed, pr.deps.modules ?? getModule))
    ) {
      r.resumed = true;
      reg = skippedResult('done in the resumed run');
    } else {
      if (pr.deps.hooks?.beforeTask) await barrier(r, changesNode(mod) && !r.check);
      reg = await runChecked(r, mod, raw);
    }
  } catch (e) {
    reg = e instanceof NodeNotHeld ? failedResult(e.message) : e instanceof Stopped ? skippedResult(e.message) : errorResult(e);
  }
  return finish(r, raw, reg);
}

/**
 * The run's hooks before a task starts: the journal's barrier (when it fails the run stops:
 * nothing unrecorded may happen) and, before a step that changes the node, the check that this
 * run still holds it (when not, this host stops: NodeNotHeld).
 */
async function barrier(r: Run, changes: boolean): Promise<void> {
  try {
    await r.pr.deps.hooks!.beforeTask!(r.host, r.task.id, { changesNode: changes });
  } catch (e) {
    if (e instanceof NodeNotHeld) throw e;
    const st = r.pr.state;
    if (!st.fatal) {
      st.fatal = e instanceof Error ? e : new Error(String(e));
      st.interrupted = true;
      r.pr.bus.emit({ type: 'warning', time: Date.now(), message: `run stopped: ${st.fatal.message}` });
    }
    st.leave(r.host, `not started: ${st.fatal!.message}`);
    throw new Stopped(`not started: ${st.fatal!.message}`);
  }
}

async function runChecked(r: Run, mod: ModuleDef | undefined, raw: Vars): Promise<Registered> {
  const { task, step } = r;
  if (step.preset) return step.preset;
  if (!mod) {
    throw new TsbmError('runtime', `unknown module '${task.module}'`, {
      pos: task.pos,
      hint: 'run `tsbm modules` to list the available modules',
    });
  }
  if (task.loop === undefined) {
    const no = falseCondition(r, r.kw.when, raw);
    if (no) return conditionSkip(no);
    return planned(r, mod) ?? (r.check && !mod.checkMode ? skippedResult(`${mod.name} does not support check mode`) : attempts(r, mod, raw));
  }
  return planned(r, mod) ?? (r.check && !mod.checkMode ? skippedResult(`${mod.name} does not support check mode`) : runLoop(r, mod, raw));
}

/**
 * Check mode on a host the run would boot first (wait_agent found no ramdisk up): a step over
 * SSH on the host itself is reported as what it would do, without connecting or rendering
 * its arguments (they may read results of steps that were only planned).
 */
function planned(r: Run, mod: ModuleDef): Registered | undefined {
  const why = r.check ? r.pr.state.host(r.host).afterBoot : undefined;
  if (why === undefined || mod.runsOn !== 'target' || r.kw.delegateTo !== undefined) return undefined;
  return { ...skippedResult(`would run after boot: ${mod.name} (${why})`), check_after_boot: true };
}

async function runLoop(r: Run, mod: ModuleDef, raw: Vars): Promise<Registered> {
  const { task, pr } = r;
  const items = renderValue(task.loop, tctx(r, raw));
  if (!Array.isArray(items)) {
    throw new TsbmError('runtime', `loop must be a list, got ${items === null ? 'null' : typeof items}`, {
      pos: task.keyPos.loop ?? task.pos,
      hint: 'give loop a YAML list or a template that yields one',
    });
  }
  const lc = task.loopControl;
  const loopVar = lc?.loopVar ?? 'item';
  const results: Registered[] = [];
  for (let i = 0; i < items.length; i++) {
    if (pr.state.interrupted) break;
    if (i > 0 && lc?.pause && !(await pause(pr, lc.pause * 1000))) break;
    const item: unknown = items[i];
    const iv: Vars = { ...raw, [loopVar]: item, ansible_loop_var: loopVar };
    if (lc?.indexVar) iv[lc.indexVar] = i;
    const t0 = Date.now();
    let one: Registered;
    try {
      const no = falseCondition(r, r.kw.when, iv);
      one = no ? conditionSkip(no) : await attempts(r, mod, iv);
    } catch (e) {
      one = errorResult(e);
    }
    // An unreachable host or an interrupt ends the loop: the task's result is that item's.
    if (one.unreachable || one.interrupted) return aboutHost(one, r.host);
    aboutHost(one, r.host);
    one[loopVar] = item;
    one.ansible_loop_var = loopVar;
    if (lc?.indexVar) one[lc.indexVar] = i;
    const label = lc?.label !== undefined ? renderValue(lc.label, tctx(r, iv)) : item;
    emitResult(r, itemStatus(one), one, Date.now() - t0, { item: label });
    results.push(one);
  }
  const failed = results.some((x) => x.failed);
  // As in Ansible: a loop over nothing, or whose every item was skipped, is a skipped task.
  if (results.every((x) => x.skipped)) {
    return { changed: false, failed: false, skipped: true, msg: results.length ? 'All items skipped' : 'No items in the list', results };
  }
  return {
    changed: results.some((x) => x.changed),
    failed,
    msg: failed ? 'One or more items failed' : 'All items completed',
    results,
  };
}

async function attempts(r: Run, mod: ModuleDef, raw: Vars): Promise<Registered> {
  const { task, pr } = r;
  if (!task.until) return once(r, mod, raw);
  const retries = task.retries ?? 3;
  const total = Math.max(retries, 0) + 1;
  const delayMs = pr.untilDelayMs ?? (task.delay ?? 5) * 1000;
  let reg: Registered = failedResult('not run');
  for (let attempt = 1; attempt <= total; attempt++) {
    reg = await once(r, mod, raw);
    if (reg.unreachable || reg.interrupted) return reg;
    reg.attempts = attempt;
    const withReg = task.register ? { ...raw, [task.register]: reg } : raw;
    if (cond(r, task.until.expr, withReg, task.until.pos)) return reg;
    if (attempt === total || pr.state.interrupted) break;
    pr.bus.emit({
      type: 'retry',
      time: Date.now(),
      host: r.host,
      task: r.name,
      taskId: task.id,
      attempt,
      retries,
      ...(r.noLog ? {} : typeof reg.msg === 'string' ? { msg: reg.msg } : {}),
    });
    if (!(await pause(pr, delayMs))) return interruptedResult(`interrupted while waiting to retry (attempt ${attempt} of ${total})`);
  }
  return { ...reg, failed: true, msg: `${reg.msg ? `${String(reg.msg)}; ` : ''}gave up after ${reg.attempts} attempts` };
}

/** A pause between attempts or loop items; false when the first Ctrl-C ended it (nothing is lost by not waiting). */
async function pause(pr: PlayRuntime, ms: number): Promise<boolean> {
  try {
    await sleep(ms, pr.interrupt);
    return true;
  } catch {
    return false;
  }
}

async function once(r: Run, mod: ModuleDef, raw: Vars): Promise<Registered> {
  const { pr, task, host } = r;
  const args = renderValue(task.args, tctx(r, raw)) as Record<string, unknown>;
  if (r.noLog) addLeaves(pr, args);
  validateArgs(mod, args, task, host);
  const target = targetSpec(r, mod, raw);
  const wasUp = pr.pool.isOpen(target);
  const reg = await runModule(r, mod, raw, args, target);
  // A connection that was up and dropped mid-task: an idempotent module may simply run again.
  if (!reg.unreachable || !mod.idempotent || !wasUp || pr.state.interrupted) return reg;
  pr.bus.emit({
    type: 'warning',
    time: Date.now(),
    host,
    task: r.name,
    message: `${String(reg.msg)}; running ${mod.name} again (it is safe to repeat)`,
  });
  return runModule(r, mod, raw, args, target);
}

async function runModule(
  r: Run,
  mod: ModuleDef,
  raw: Vars,
  args: Record<string, unknown>,
  target: ConnectionSpec,
): Promise<Registered> {
  const { pr, task, host, kw } = r;
  const timeoutMs = kw.timeout && kw.timeout > 0 ? kw.timeout * 1000 : undefined;
  // One controller per attempt, fed by the run's abort (AbortSignal.any would keep a dependent
  // signal per task alive on the run-long signal until the run ends); a module that only looks
  // (a wait) also by the first Ctrl-C, and every task by the loss of its node's lock.
  const ac = new AbortController();
  const signal = ac.signal;
  const feeds: [AbortSignal, () => void][] = [];
  const feed = (from: AbortSignal | undefined, reason: () => unknown) => {
    if (!from) return;
    const onAbort = () => ac.abort(reason());
    if (from.aborted) onAbort();
    else {
      from.addEventListener('abort', onAbort, { once: true });
      feeds.push([from, onAbort]);
    }
  };
  feed(pr.taskAbort, () => new Interrupted('interrupted: the grace period after Ctrl-C ended'));
  if (!changesNode(mod)) feed(pr.interrupt, () => new Interrupted('interrupted (Ctrl-C): it only waited or looked, so it stopped at once'));
  const lost = pr.deps.hooks?.nodeLost?.(host);
  feed(lost, () => lost?.reason);
  const env = environment(r, raw);
  const ctx = createModuleContext({
    host,
    task: r.name,
    taskId: task.id,
    vars: lazyVars(raw, where(r), { lenient: true }),
    check: r.check,
    diff: pr.diff,
    signal,
    services: pr.services,
    pool: pr.pool,
    fresh: pr.deps.fresh ?? pr.deps.connect,
    bus: pr.bus,
    redactor: pr.redactor,
    target,
    hostSpec: () => pr.inventory.connectionSpec(host, lazyVars(raw, where(r))),
    execDefaults: {
      ...env,
      ...(kw.become ? { become: kw.becomeUser ? { user: kw.becomeUser } : {} } : {}),
    },
    startedAt: r.started,
    noLog: r.noLog,
    taskTimeout: timeoutMs !== undefined,
  });

  let timer: NodeJS.Timeout | undefined;
  const stop = new Promise<never>((_, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  stop.catch(() => {});
  if (timeoutMs) timer = setTimeout(() => ac.abort(new TaskTimeout(kw.timeout!)), timeoutMs);
  let reg: Registered;
  try {
    const running = mod.run(ctx, args);
    running.catch(() => {}); // a module that ignores the abort must not leave an unhandled rejection
    reg = normalizeResult(await Promise.race([running, stop]));
  } catch (e) {
    if (e instanceof TaskTimeout) return failedResult(e.message, { timed_out: true });
    if (isUnreachable(e)) {
      pr.pool.drop(target);
      return unreachableResult(e.message);
    }
    if (signal.aborted) {
      const why = signal.reason;
      if (why instanceof NodeNotHeld) return failedResult(why.message);
      return interruptedResult(isInterrupt(why) ? why.message : 'interrupted');
    }
    throw e;
  } finally {
    if (timer) clearTimeout(timer);
    for (const [from, onAbort] of feeds) from.removeEventListener('abort', onAbort);
  }
  if (r.noLog) addLeaves(pr, reg);
  const withReg = task.register ? { ...raw, [task.register]: reg } : raw;
  if (task.changedWhen && task.changedWhen.length > 0) {
    reg.changed = task.changedWhen.every((c) => cond(r, c.expr, withReg, c.pos));
  }
  if (task.failedWhen && task.failedWhen.length > 0) {
    reg.failed = task.failedWhen.every((c) => cond(r, c.expr, withReg, c.pos));
  }
  return reg;
}

class TaskTimeout extends Error {
  constructor(seconds: number) {
    super(`timed out after ${seconds}s`);
  }
}

function targetSpec(r: Run, mod: ModuleDef, raw: Vars): ConnectionSpec {
  const { pr, host, kw } = r;
  if (mod.runsOn === 'controller') return localSpec();
  if (kw.delegateTo !== undefined) {
    const to = String(renderValue(kw.delegateTo, tctx(r, raw)));
    if (to === LOCALHOST || to === '127.0.0.1') return localSpec();
    if (!pr.inventory.names().includes(to)) {
      throw new TsbmError('runtime', `delegate_to: '${to}' is not an inventory host`, {
        pos: r.task.keyPos.delegate_to ?? r.task.pos,
        hint: 'use localhost or a host from the inventory',
      });
    }
    const dv = lazyVars(hostVars(pr, to), where(r));
    return pr.inventory.connectionSpec(to, dv);
  }
  return pr.inventory.connectionSpec(host, lazyVars(raw, where(r)));
}

/** The task's environment, with values that carry a secret kept off remote command lines. */
function environment(r: Run, raw: Vars): Pick<ExecOptions, 'env' | 'secretEnv'> {
  if (r.kw.environment.length === 0) return {};
  const env: Record<string, string> = {};
  const secretEnv: Record<string, string> = {};
  for (const e of r.kw.environment) {
    const v = renderValue(e, tctx(r, raw));
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      throw new TsbmError('runtime', 'environment must be a mapping of names to values', {
        pos: r.task.keyPos.environment ?? r.task.pos,
      });
    }
    for (const [k, x] of Object.entries(v)) {
      const text = typeof x === 'string' ? x : JSON.stringify(x);
      if (r.pr.redactor.redact(text) !== text) {
        secretEnv[k] = text;
        delete env[k];
      } else {
        env[k] = text;
        delete secretEnv[k];
      }
    }
  }
  return {
    ...(Object.keys(env).length > 0 ? { env } : {}),
    ...(Object.keys(secretEnv).length > 0 ? { secretEnv } : {}),
  };
}

function where(r: Run): Omit<TemplateContext, 'vars'> {
  return {
    pos: r.task.pos,
    task: r.name,
    host: r.host,
    baseDir: r.task.baseDir,
    onSecret: (v) => r.pr.redactor.add(v),
  };
}

function tctx(r: Run, raw: Vars): TemplateContext {
  return { ...where(r), vars: lazyVars(raw, where(r)) };
}

function cond(r: Run, expr: string, raw: Vars, pos: TemplateContext['pos']): boolean {
  return evalCondition(expr, { ...tctx(r, raw), ...(pos ? { pos } : {}) });
}

/** The first `when` condition (the task's, its blocks', its role's) that is false, if any. */
function falseCondition(r: Run, when: Effective['when'], raw: Vars): string | undefined {
  return when.find((w) => !cond(r, w.expr, raw, w.pos))?.expr;
}

/** A skip that names its condition, as Ansible's `false_condition` does. */
function conditionSkip(expr: string): Registered {
  const shown = expr.trim().replace(/\s+/g, ' ');
  return { ...skippedResult(`Conditional result was False: when: ${shown}`), false_condition: shown };
}

/** ignore_errors / no_log may be booleans or conditions. */
function flag(r: Run, v: boolean | string, raw: Vars): boolean {
  return typeof v === 'boolean' ? v : cond(r, v, raw, r.task.pos);
}

function addLeaves(pr: PlayRuntime, v: unknown, depth = 0): void {
  if (depth > 20) return;
  if (typeof v === 'string') pr.redactor.add(v);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) addLeaves(pr, x, depth + 1);
}

function errorResult(e: unknown): Registered {
  if (isUnreachable(e)) return unreachableResult(e.message);
  if (e instanceof TsbmError) {
    const at = e.pos ? ` (${formatPos(e.pos)})` : '';
    return failedResult(`${e.message}${at}${e.hint ? `; ${e.hint}` : ''}`);
  }
  return failedResult(e instanceof Error ? e.message : String(e));
}

function itemStatus(reg: Registered): HostStatus {
  return statusOf(reg, { ignoreErrors: false, ignoreUnreachable: false, rescuable: false });
}

interface Emitted {
  item?: unknown;
  vars?: Vars;
  counts?: Counts;
}

/**
 * A message about this host, without the host's name in front: every line that shows it names
 * the host and the task already (`failed: [node01] Pull the image (0.4s): ...`).
 */
function aboutHost(reg: Registered, host: string): Registered {
  const prefix = `${host}: `;
  if (typeof reg.msg === 'string' && reg.msg.startsWith(prefix)) reg.msg = reg.msg.slice(prefix.length);
  return reg;
}

const BAD: ReadonlySet<HostStatus> = new Set(['failed', 'unreachable', 'ignored', 'rescued', 'interrupted']);

function emitResult(r: Run, status: HostStatus, reg: Registered, durationMs: number, x: Emitted = {}): void {
  const { item, vars, counts } = x;
  const shown = r.noLog ? censor(reg) : reg;
  const msg = typeof reg.msg === 'string' && !r.noLog ? reg.msg : undefined;
  // The event names host and task in fields of its own: the message is only what happened.
  const failMsg = BAD.has(status)
    ? r.noLog
      ? `${reg.unreachable ? 'unreachable' : 'failed'} (details hidden: no_log)`
      : String(reg.msg ?? (reg.unreachable ? 'unreachable' : 'failed'))
    : msg;
  r.pr.bus.emit({
    type: 'host_result',
    time: Date.now(),
    host: r.host,
    task: r.name,
    taskId: r.task.id,
    status,
    changed: reg.changed,
    ...(failMsg !== undefined ? { msg: failMsg } : {}),
    ...(item !== undefined ? { item: r.noLog ? 'censored (no_log)' : item } : {}),
    result: shown,
    durationMs,
    ...(counts ? { counts } : {}),
    ...(vars && !r.noLog ? { vars } : {}),
    ...(r.resumed ? { resumed: true } : {}),
  });
}

function finish(r: Run, raw: Vars, reg: Registered): Outcome {
  const { pr, host, task, step } = r;
  const hs = pr.state.host(host);
  let ignoreErrors = false;
  if (reg.failed) {
    try {
      ignoreErrors = flag(r, r.kw.ignoreErrors, raw);
    } catch (e) {
      reg = errorResult(e);
    }
  }
  aboutHost(reg, host);
  const status = statusOf(reg, { ignoreErrors, ignoreUnreachable: r.kw.ignoreUnreachable, rescuable: step.rescuable });

  if (task.register && !r.resumed) hs.facts[task.register] = reg;
  const afterBoot = r.check ? afterBootOf(reg) : undefined;
  if (afterBoot !== undefined) hs.afterBoot = afterBoot;
  const set = !reg.failed && !reg.unreachable ? hostVarsFrom(reg) : undefined;
  if (set) {
    pr.redactor.addFromVars(set);
    for (const [k, v] of Object.entries(set)) {
      const old = hs.facts[k];
      // facts / ansible_facts accumulate (several gathers); plain variables are replaced.
      hs.facts[k] =
        (k === 'facts' || k === 'ansible_facts') && old && typeof old === 'object' ? { ...(old as Vars), ...(v as Vars) } : v;
    }
  }
  if (status === 'failed' || status === 'rescued' || status === 'unreachable') {
    hs.facts.tsbm_failed_task = { name: r.name, id: task.id };
    hs.facts.tsbm_failed_result = r.noLog ? censor(reg) : reg;
  }
  if (reg.changed && !reg.failed && !reg.unreachable) notify(pr, hs.notified, task);

  pr.state.fell(host, status, { task: r.name, msg: String(reg.msg ?? status) });
  // Executor actions (meta) count nothing, as in Ansible; everything else by recap-counts.ts.
  const counts = (pr.deps.modules ?? getModule)(task.module)?.counted === false ? {} : countsFor(status, reg.changed);
  addCounts(hs.stats, counts);
  // What this task set, for the journal: --resume restores it when the task is skipped.
  const setVars: Vars = { ...(task.register && !r.resumed ? { [task.register]: reg } : {}), ...(set ?? {}) };
  emitResult(r, status, reg, Date.now() - r.started, { counts, ...(Object.keys(setVars).length ? { vars: setVars } : {}) });
  const meta = metaOf(reg);
  if (meta === 'end_play' && !reg.failed) pr.endPlay = true;
  if (meta === 'end_host' && !reg.failed) hs.ended = true;
  const outcome = walkOutcome(status);
  // Skipped here (a false condition, check mode), as opposed to done in the run a --resume continues.
  const notRun = status === 'skipped' && !r.resumed;
  return { status: outcome, ...(meta ? { meta } : {}), ...(notRun ? { notRun: true } : {}) };
}

function notify(pr: PlayRuntime, into: Set<object>, task: Task): void {
  for (const n of task.notify) {
    const hit = notified(pr.play.handlers, n);
    if (hit.length === 0) {
      pr.bus.emit({
        type: 'warning',
        time: Date.now(),
        task: taskName(task),
        message: `notify: no handler named or listening to '${n}' (${formatPos(task.pos)})`,
      });
    }
    for (const h of hit) into.add(h);
  }
}

/**
 * The handlers a notify reaches, as in Ansible: one handler by name (when several share it, the
 * play's own wins over a role's, and the last one loaded among those; a role imported twice
 * thus runs its handler once), plus every handler that listens to the topic.
 */
function notified<H extends { name?: string; listen: string[]; role?: unknown }>(handlers: readonly H[], n: string): H[] {
  const named = handlers.filter((h) => h.name === n);
  const own = named.filter((h) => h.role === undefined);
  const byName = (own.length > 0 ? own : named).at(-1);
  // `listen` also holds the handler's own name (see parseHandler): a name is not a topic.
  return handlers.filter((h) => h === byName || (h.name !== n && h.listen.includes(n)));
}
