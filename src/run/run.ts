// One `tsbm run`, from the options the CLI parsed to the exit code: the resume restored, the
// simulated lab started, the outputs attached, validate's checks, the journal and node locks,
// signals, the executor, and the report. Each step is a unit of its own in this folder.
import { join, resolve } from 'node:path';
import { EXIT, TsbmError } from '../errors.js';
import type { RunOptions } from '../executor/options.js';
import type { ResumeState } from '../journal/resume.js';
import { EventBus } from '../output/events.js';
import { tsbmVersion } from '../util/version.js';
import type { ExtraVarSource } from './extra-vars.js';
import type { RunJournal } from './journal.js';
import { refuseLabOfOneRun, startRunLab } from './lab.js';
import { attachOutputs, type RunOutputs } from './outputs.js';
import { runPreflight } from './preflight.js';
import { writeReportAfterRun } from './report.js';
import type { RunRequest } from './request.js';
import type { PreparedResume } from './resume.js';
import { watchOutcomes } from './resume-hint.js';
import { watchSignals } from './signals.js';
import { runHooks } from './hooks.js';
import { runNodes } from './nodes.js';
import { openRunStore } from './store.js';
import { newRunId } from '../journal/run-id.js';

type Executor = typeof import('../executor/run.js');

export async function runPlaybookRequest(req: RunRequest): Promise<number> {
  const { redactor } = req;
  // Extra vars with secret-looking names are masked from here on, in every output.
  redactor.addFromVars(req.opts.extraVars);
  if (req.resume) refuseLabOfOneRun(req.opts.inventories, req.resume.run);
  const prepared = req.resume && req.journalDir ? await prepareResumeOf(req.journalDir, req.resume, req.opts, req.sources) : undefined;
  const opts = prepared?.opts ?? req.opts;
  const sources = prepared?.sources ?? req.sources;
  if (prepared) redactor.addFromVars(opts.extraVars);
  const executor = await import('../executor/run.js');
  const lab = await startRunLab(opts.inventories);
  try {
    return await runWith(executor, { ...opts, inventories: lab.inventories }, sources, prepared, req);
  } finally {
    await lab.stop();
  }
}

/** `--resume RUN|last` [`--force`]: the run to continue, with its options and extra vars restored. */
async function prepareResumeOf(
  journalDir: string,
  resume: NonNullable<RunRequest['resume']>,
  given: RunOptions,
  sources: ExtraVarSource[],
): Promise<PreparedResume> {
  const { readJournal, resolveRun } = await import('../journal/reader.js');
  const { prepareResume } = await import('./resume.js');
  return prepareResume(readJournal(resolveRun(journalDir, resume.run)), given, sources, resume.force);
}

async function runWith(
  executor: Executor,
  opts: RunOptions,
  sources: ExtraVarSource[],
  prepared: PreparedResume | undefined,
  req: RunRequest,
): Promise<number> {
  const { redactor, io, journalDir, report } = req;
  if (opts.listHosts || opts.listTasks || opts.listTags) {
    io.stdout.write(redactor.redact(await executor.listPlaybook(opts)));
    return EXIT.ok;
  }
  const bus = new EventBus(redactor);
  const outputs = await attachOutputs(bus, opts, req.verbosity, io);
  const resume = await startResume(prepared, opts, bus, outputs, req.resume?.retryFailed === true);

  // validate's checks, for what this run will do: refused before any lock, journal or host.
  const pre = await runPreflight(opts, bus, resume);
  if ('refused' in pre || opts.syntaxCheck) {
    await outputs.done();
    if ('refused' in pre) {
      io.stderr(redactor.redact(pre.summary));
      if (report) io.stderr(`tsbm: no report written to ${report}: the run did not start\n`);
      return pre.refused;
    }
    if (opts.output !== 'json') io.stdout.write(redactor.redact(await executor.listPlaybook(opts)));
    return EXIT.ok;
  }

  const runId = newRunId();
  const store = await openRunStore(req, req.opts.inventories).catch(async (e) => {
    await outputs.done();
    throw e;
  });
  const journal = journalDir ? await openJournal(opts, sources, resume, bus, req, outputs, runId).catch(async (e) => {
    await store.close();
    throw e;
  }) : undefined;
  const nodes = runNodes(store, {
    runId,
    playbook: resolve(opts.playbook),
    chain: resume?.chain ?? new Set(),
    ...(resume ? { staysFailed: resume.staysFailed } : {}),
  });
  const signals = watchSignals(bus, io.stdout);
  const outcomes = watchOutcomes(bus);
  let code: number;
  try {
    code = await executor.runPlaybook(
      opts,
      { bus, redactor, signal: signals.signal, hooks: runHooks(journal?.hooks, nodes.hooks), runId },
      pre.loaded,
    );
  } catch (e) {
    // The journal says how the run ended even when it never started (`runs list`: exit N).
    journal?.endWith(e instanceof TsbmError ? e.exitCode : EXIT.unexpected, e instanceof TsbmError ? e.oneLine() : String(e));
    throw e;
  } finally {
    signals.detach();
    try {
      await journal?.close();
    } finally {
      await nodes.close();
    }
    await outputs.done();
    if (report && journal && journalDir) {
      await writeReportAfterRun(join(journalDir, `${journal.runId}.jsonl`), report, { redactor, io, json: opts.output === 'json' });
    }
    const hint = outcomes.hint(req, journal?.runId);
    if (hint) io.stderr(redactor.redact(hint));
  }
  return signals.signal.aborted ? EXIT.interrupted : code;
}

/** The resumed run's state, after checking its files did not change (or --force); its notes as warnings. */
async function startResume(
  prepared: PreparedResume | undefined,
  opts: RunOptions,
  bus: EventBus,
  outputs: RunOutputs,
  retryFailed: boolean,
): Promise<ResumeState | undefined> {
  if (!prepared) return undefined;
  const { checkResumable, resumeStateFrom } = await import('../journal/resume.js');
  const { runHashes } = await import('./journal.js');
  const resume = resumeStateFrom(prepared.previous, { check: opts.check, retryFailed });
  try {
    checkResumable(prepared.previous, runHashes(opts), prepared.force);
  } catch (e) {
    await outputs.done();
    throw e;
  }
  for (const message of prepared.notes) bus.emit({ type: 'warning', time: Date.now(), message });
  return resume;
}

async function openJournal(
  opts: RunOptions,
  sources: ExtraVarSource[],
  resume: ResumeState | undefined,
  bus: EventBus,
  req: RunRequest,
  outputs: RunOutputs,
  runId: string,
): Promise<RunJournal> {
  const journalDir = req.journalDir!;
  const { openRunJournal } = await import('./journal.js');
  const { recordScope } = await import('./resume.js');
  const scope = await recordScope(opts, sources);
  try {
    return openRunJournal(opts, {
      bus,
      redactor: req.redactor,
      journalDir,
      runId,
      version: tsbmVersion(),
      scope,
      ...(resume ? { resume } : {}),
    });
  } catch (e) {
    await outputs.done();
    if (e instanceof TsbmError) throw e;
    throw new TsbmError('runtime', `cannot open the run journal in ${journalDir}: ${(e as Error).message}`, {
      hint: 'point --journal-dir at a writable directory, or run with --no-journal',
    });
  }
}
