// `tsbm run`: validates flags, attaches the renderer and the JUnit writer to a redacting
// event bus, wires Ctrl-C to an AbortSignal and hands over to the executor.
import { join } from 'node:path';
import { EXIT, optionsError, TsbmError } from '../errors.js';
import { EventBus } from '../output/events.js';
import type { AttachedRenderer, AttachRenderer, Verbosity } from '../output/renderer.js';
import { loadSimLab } from '../inventory/sim-lab.js';
import { simSpecOf } from '../inventory/sim-spec.js';
import { tsbmVersion } from '../util/version.js';
import { redactor } from './context.js';
import type { ResumeState } from '../journal/resume.js';
import type { RunJournal } from './run-journal.js';
import type { PreparedResume } from './run-resume.js';
import { DEFAULT_JOURNAL_DIR } from './runs.js';
import type { RunOptions } from '../executor/options.js';
import { type ExtraVarSource, extraVarSources } from './extra-vars.js';
import { buildRunOptions, type RawRunFlags } from './run-options.js';
import { checkOutputFile } from './output-file.js';
import { runPreflight } from './run-preflight.js';

const RENDERERS: Record<'tty' | 'plain' | 'json', () => Promise<{ attach: AttachRenderer }>> = {
  tty: () => import('../output/renderers/tty.js'),
  plain: () => import('../output/renderers/plain.js'),
  json: () => import('../output/renderers/json.js'),
};

/** After the run, a straggling socket must not keep the process alive for long. */
const EXIT_GRACE_MS = 2000;

function colorWanted(isTTY: boolean): boolean {
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return false;
  if (process.env.FORCE_COLOR !== undefined && process.env.FORCE_COLOR !== '0') return true;
  return isTTY;
}

export async function runCommand(playbook: string, flags: Record<string, unknown>, verbosity: Verbosity): Promise<number> {
  const stdout = process.stdout;
  // a dumb terminal cannot move the cursor: it gets the plain renderer
  const live = stdout.isTTY === true && process.env.TERM !== 'dumb';
  const given = buildRunOptions(playbook, flags as RawRunFlags, { verbosity, stdoutIsTTY: live });
  let sources = extraVarSources((flags as RawRunFlags).extraVars ?? []);
  // Extra vars with secret-looking names are masked from here on, in every output.
  redactor.addFromVars(given.extraVars);
  const journalDir = journalSettings(flags);
  if (typeof flags.resume === 'string') await refuseLabOfOneRun(given.inventories, flags.resume);
  const resume = await prepareResumeFrom(flags, journalDir, given, sources);
  const opts = resume?.opts ?? given;
  if (resume) {
    sources = resume.sources;
    redactor.addFromVars(opts.extraVars);
  }
  if (opts.junit) checkOutputFile('--junit', opts.junit);
  const report = reportSettings(flags);
  const executor = await import('../executor/run.js');

  // An inventory with a `tsbm_sim` block gets a simulated lab for the length of this command.
  // The lab code (BMCs, SSH server, ISO reader) is only loaded when an inventory mentions one.
  const sim = opts.inventories.some((p) => simSpecOf(p) !== undefined)
    ? await (await loadSimLab()).startSimInventories(opts.inventories)
    : { inventories: opts.inventories, stop: async () => {} };
  let code: number;
  try {
    code = await runWith(executor, { ...opts, inventories: sim.inventories }, verbosity, {
      journalDir,
      lockDir: typeof flags.lockDir === 'string' ? flags.lockDir : undefined,
      sources,
      resume,
      report,
    });
  } finally {
    await sim.stop();
  }
  setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
  return code;
}

/**
 * A `tsbm_sim` inventory starts a lab for one run and stops it at the end: the nodes a run drove
 * are gone, and a new lab's nodes start powered off on other ports. A resume against it could
 * only pretend (skip the ISO insertion, then wait for a ramdisk that never boots), so it is
 * refused, even with --force.
 */
async function refuseLabOfOneRun(inventories: readonly string[], run: string): Promise<void> {
  const lab = inventories.find((p) => simSpecOf(p) !== undefined);
  if (!lab) return;
  throw new TsbmError('options', `cannot resume run ${run}: ${lab} starts a simulated lab for one run (tsbm_sim), so the nodes that run drove are gone (a new lab's nodes start powered off, on other ports)`, {
    hint: 'run it again without --resume; for a lab that outlives a run (and can be resumed against), start one with `tsbm sim up --nodes N` and run with -i .tsbm/sim/inventory.yml',
  });
}

/** `--journal-dir DIR` (default .tsbm/runs) or `--no-journal`. */
function journalSettings(flags: Record<string, unknown>): string | undefined {
  if (flags.journal === false) return undefined;
  return typeof flags.journalDir === 'string' && flags.journalDir.trim() ? flags.journalDir : DEFAULT_JOURNAL_DIR;
}

/** `--report FILE`: the HTML report, written from the run journal when the run ends. */
function reportSettings(flags: Record<string, unknown>): string | undefined {
  if (typeof flags.report !== 'string') return undefined;
  if (flags.journal === false) throw optionsError('--report is built from the run journal', 'drop --no-journal');
  checkOutputFile('--report', flags.report);
  return flags.report;
}

/** `--resume RUN|last` [`--force`]: the run to continue, with its options and extra vars restored. */
async function prepareResumeFrom(
  flags: Record<string, unknown>,
  journalDir: string | undefined,
  given: RunOptions,
  sources: ExtraVarSource[],
): Promise<PreparedResume | undefined> {
  if (typeof flags.resume !== 'string') {
    if (flags.force) throw optionsError('--force only applies with --resume', 'add --resume RUN, or drop --force');
    return undefined;
  }
  if (flags.journal === false || !journalDir) throw optionsError('--resume needs the run journal', 'drop --no-journal');
  const { readJournal, resolveRun } = await import('../journal/reader.js');
  const { prepareResume } = await import('./run-resume.js');
  return prepareResume(readJournal(resolveRun(journalDir, flags.resume)), given, sources, flags.force === true);
}

interface RunSettings {
  journalDir: string | undefined;
  lockDir: string | undefined;
  sources: ExtraVarSource[];
  resume: PreparedResume | undefined;
  /** `--report FILE`, written from the journal when the run ends. */
  report: string | undefined;
}

async function runWith(
  executor: typeof import('../executor/run.js'),
  opts: RunOptions,
  verbosity: Verbosity,
  settings: RunSettings,
): Promise<number> {
  const { journalDir, resume: prepared, report } = settings;
  const stdout = process.stdout;
  if (opts.listHosts || opts.listTasks || opts.listTags) {
    stdout.write(redactor.redact(await executor.listPlaybook(opts)));
    return EXIT.ok;
  }

  const bus = new EventBus(redactor);
  const { attach } = await RENDERERS[opts.output]();
  const attached: AttachedRenderer[] = [
    attach(bus, { stream: stdout, verbosity, color: colorWanted(stdout.isTTY === true) }),
  ];
  if (opts.junit) {
    const { attachJUnit } = await import('../output/junit.js');
    attached.push(attachJUnit(bus, opts.junit, opts.junitCases ?? 'host'));
  }

  let resume: ResumeState | undefined;
  if (prepared) {
    const { checkResumable, resumeStateFrom } = await import('../journal/resume.js');
    const { runHashes } = await import('./run-journal.js');
    resume = resumeStateFrom(prepared.previous, { check: opts.check });
    try {
      checkResumable(prepared.previous, runHashes(opts), prepared.force);
    } catch (e) {
      for (const a of attached) await a.done();
      throw e;
    }
    for (const message of prepared.notes) bus.emit({ type: 'warning', time: Date.now(), message });
  }

  // validate's checks, for what this run will do: refused before any lock, journal or host.
  const pre = await runPreflight(opts, bus, resume);
  if ('refused' in pre || opts.syntaxCheck) {
    for (const a of attached) await a.done();
    if ('refused' in pre) {
      process.stderr.write(redactor.redact(pre.summary));
      if (report) process.stderr.write(`tsbm: no report written to ${report}: the run did not start\n`);
      return pre.refused;
    }
    if (opts.output !== 'json') stdout.write(redactor.redact(await executor.listPlaybook(opts)));
    return EXIT.ok;
  }

  let journal: RunJournal | undefined;
  if (journalDir) {
    const { openRunJournal } = await import('./run-journal.js');
    const { recordScope } = await import('./run-resume.js');
    const { lockDirFor } = await import('../journal/lock-dir.js');
    const scope = await recordScope(opts, settings.sources);
    try {
      journal = openRunJournal(opts, {
        bus,
        redactor,
        journalDir,
        lockDir: lockDirFor(settings.lockDir),
        version: tsbmVersion(),
        scope,
        ...(resume ? { resume } : {}),
      });
    } catch (e) {
      for (const a of attached) await a.done();
      if (e instanceof TsbmError) throw e;
      throw new TsbmError('runtime', `cannot open the run journal in ${journalDir}: ${(e as Error).message}`, {
        hint: 'point --journal-dir at a writable directory, or run with --no-journal',
      });
    }
  }

  const controller = new AbortController();
  let interrupts = 0;
  // SIGTERM (a cancelled CI job) is handled like Ctrl-C: stop scheduling, finish cleanly.
  const onSignal = () => {
    interrupts++;
    if (interrupts === 1) {
      bus.emit({
        type: 'warning',
        time: Date.now(),
        message: 'interrupted: press Ctrl-C again to quit at once (running tasks are then left as they are)',
      });
      controller.abort();
    } else {
      if (stdout.isTTY) stdout.write('\x1b[?25h');
      process.exit(EXIT.interrupted);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let code: number;
  try {
    code = await executor.runPlaybook(
      opts,
      {
        bus,
        redactor,
        signal: controller.signal,
        ...(journal ? { hooks: journal.hooks, runId: journal.runId } : {}),
      },
      pre.loaded,
    );
  } catch (e) {
    // The journal says how the run ended even when it never started (`runs list`: exit N).
    journal?.endWith(e instanceof TsbmError ? e.exitCode : EXIT.unexpected, e instanceof TsbmError ? e.oneLine() : String(e));
    throw e;
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    await journal?.close();
    for (const a of attached) await a.done();
    if (report && journal && journalDir) await writeReport(join(journalDir, `${journal.runId}.jsonl`), report, opts.output);
  }
  return controller.signal.aborted ? EXIT.interrupted : code;
}

/** Writes the report after the run, whatever its outcome; a failure to write it is said, not fatal. */
async function writeReport(journalFile: string, file: string, output: RunOptions['output']): Promise<void> {
  try {
    const { writeRunReport } = await import('../report/write.js');
    const r = writeRunReport(journalFile, file, redactor);
    // stdout stays pure JSON Lines with --output json
    if (output !== 'json') process.stdout.write(`Report: ${r.file}\n`);
  } catch (e) {
    process.stderr.write(`tsbm: warning: could not write the report ${file}: ${redactor.redact((e as Error).message)}\n`);
  }
}
