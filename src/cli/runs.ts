// `tsbm runs list` and `tsbm runs show RUN`: read the run journals under .tsbm/runs.
import type { Command } from 'commander';

import { DEFAULT_JOURNAL_DIR } from '../journal/journal-dir.js';

/** `--journal-dir` when given, else journal_dir of tsbm.cfg / $TSBM_JOURNAL_DIR, else .tsbm/runs. */
async function journalDirOf(opts: { journalDir?: string }): Promise<string> {
  if (opts.journalDir) return opts.journalDir;
  const { commandSettings } = await import('./config-defaults.js');
  return commandSettings().get('journal_dir') ?? DEFAULT_JOURNAL_DIR;
}
const JOURNAL_DIR_HELP = 'where run journals are kept (default .tsbm/runs; journal_dir in tsbm.cfg, $TSBM_JOURNAL_DIR)';

export function register(program: Command): void {
  const runs = program
    .command('runs')
    .description('list recorded runs and show one run\'s per-host progress (from the run journal)');
  runs
    .command('list')
    .description('list recorded runs, oldest first')
    .option('--journal-dir <dir>', JOURNAL_DIR_HELP)
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: { journalDir?: string; json?: boolean }) => {
      const { listRuns } = await import('../journal/reader.js');
      const { formatRunList } = await import('../journal/format.js');
      const list = listRuns(await journalDirOf(opts));
      process.stdout.write(opts.json ? `${JSON.stringify(list, null, 2)}\n` : formatRunList(list));
    });
  runs
    .command('show')
    .argument('<run>', 'run id (or a unique prefix), or "last"')
    .description('per-host progress of one run, with failures and their messages')
    .option('--journal-dir <dir>', JOURNAL_DIR_HELP)
    .option('--json', 'print JSON instead of a table')
    .action(async (ref: string, opts: { journalDir?: string; json?: boolean }) => {
      const { hostProgress, readJournal, resolveRun } = await import('../journal/reader.js');
      const { formatRunShow } = await import('../journal/format.js');
      const journal = readJournal(resolveRun(await journalDirOf(opts), ref));
      const progress = hostProgress(journal.records);
      process.stdout.write(
        opts.json ? `${JSON.stringify({ header: journal.header, hosts: progress }, null, 2)}\n` : formatRunShow(journal, progress),
      );
    });
  runs
    .command('report')
    .argument('<run>', 'run id (or a unique prefix), or "last"')
    .description('write one run as a self-contained HTML report (timeline, summary, per-node results)')
    .requiredOption('-o, --output <file>', 'the HTML file to write')
    .option('--journal-dir <dir>', JOURNAL_DIR_HELP)
    .addHelpText('after', REPORT_HELP)
    .action(async (ref: string, opts: { journalDir?: string; output: string }) => {
      const { runsReportCommand } = await import('./runs-report.js');
      process.stdout.write(runsReportCommand(ref, { ...opts, journalDir: await journalDirOf(opts) }));
    });
}

const REPORT_HELP = `
Examples:
  tsbm runs report last -o report.html
  tsbm runs report 20261201-1435 -o /tmp/deploy.html --journal-dir ci/.tsbm/runs

The file has no external assets and makes no network requests: open it in any browser or
keep it as a CI artifact. A run that was killed or crashed is reported up to its last
journal line; a resumed run is reported together with the runs it continued.`;
