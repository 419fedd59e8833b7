// `tsbm run`: turns the flags into a run request (src/run/request.ts) and hands it to the run
// layer (src/run/run.ts), which owns the run's lifecycle; then exits with its code.
import { optionsError } from '../errors.js';
import type { Verbosity } from '../output/renderer.js';
import { extraVarSources } from '../run/extra-vars.js';
import type { RunRequest } from '../run/request.js';
import { DEFAULT_JOURNAL_DIR } from '../journal/journal-dir.js';
import { redactor } from './context.js';
import { checkOutputFile } from './output-file.js';
import { buildRunOptions, type RawRunFlags } from './run-options.js';
import { commandSettings, runDefaults } from './config-defaults.js';
import { describeSource } from '../config/settings.js';
import { type NodeStoreSetting, resolveStoreSetting } from '../nodes/setting.js';
import type { VaultFlags } from './vault-options.js';

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
  const cfg = commandSettings();
  // Vault passwords first: -e @file, inventories and playbooks may all hold vaulted values.
  await (await import('./vault-setup.js')).setupVault(flags as VaultFlags, cfg);
  const opts = buildRunOptions(playbook, flags as RawRunFlags, { verbosity, stdoutIsTTY: live, defaults: runDefaults(cfg) });
  const journalDir = journalSettings(flags, cfg.get('journal_dir'));
  const resume = resumeSettings(flags, journalDir);
  if (opts.junit) checkOutputFile('--junit', opts.junit);
  const report = reportSettings(flags);
  const request: RunRequest = {
    opts,
    sources: extraVarSources((flags as RawRunFlags).extraVars ?? []),
    verbosity,
    journalDir,
    lockDir: typeof flags.lockDir === 'string' ? flags.lockDir : cfg.get('lock_dir'),
    state: nodeStoreSetting(flags, cfg),
    ...(typeof flags.state === 'string' ? { stateFlag: flags.state } : {}),
    ...(resume ? { resume } : {}),
    ...(report ? { report } : {}),
    redactor,
    io: { stdout, stderr: (text) => process.stderr.write(text), color: colorWanted(stdout.isTTY === true) },
  };
  const { runPlaybookRequest } = await import('../run/run.js');
  const code = await runPlaybookRequest(request);
  setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
  return code;
}

/** `--journal-dir DIR` (else journal_dir of the config, default .tsbm/runs) or `--no-journal`. */
function journalSettings(flags: Record<string, unknown>, configured: string | undefined): string | undefined {
  if (flags.journal === false) return undefined;
  return typeof flags.journalDir === 'string' && flags.journalDir.trim() ? flags.journalDir : (configured ?? DEFAULT_JOURNAL_DIR);
}

/** `--resume RUN|last` [`--force`]. */
function resumeSettings(flags: Record<string, unknown>, journalDir: string | undefined): RunRequest['resume'] {
  if (typeof flags.resume !== 'string') {
    if (flags.force) throw optionsError('--force only applies with --resume', 'add --resume RUN, or drop --force');
    if (flags.retryFailed) throw optionsError('--retry-failed only applies with --resume', 'add --resume RUN (a new run runs every host anyway)');
    return undefined;
  }
  if (flags.journal === false || !journalDir) throw optionsError('--resume needs the run journal', 'drop --no-journal');
  return { run: flags.resume, force: flags.force === true, retryFailed: flags.retryFailed === true };
}

/** `--report FILE`: the HTML report, written from the run journal when the run ends. */
function reportSettings(flags: Record<string, unknown>): string | undefined {
  if (typeof flags.report !== 'string') return undefined;
  if (flags.journal === false) throw optionsError('--report is built from the run journal', 'drop --no-journal');
  checkOutputFile('--report', flags.report);
  return flags.report;
}

/** --state, else $TSBM_STATE, else `state` in tsbm.cfg, else files in the lock directory (as `tsbm nodes`). */
function nodeStoreSetting(flags: Record<string, unknown>, cfg: ReturnType<typeof commandSettings>): NodeStoreSetting {
  const fromFile = cfg.fromFile('state');
  return resolveStoreSetting({
    flag: typeof flags.state === 'string' ? flags.state : undefined,
    lockDir: typeof flags.lockDir === 'string' ? flags.lockDir : cfg.get('lock_dir'),
    ...(fromFile ? { config: { value: fromFile, from: describeSource(cfg.source('state')) } } : {}),
  });
}
