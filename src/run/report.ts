// `--report FILE`: the HTML report, written from the run journal when the run ends, whatever its
// outcome. A failure to write it is said, not fatal.
import type { Redactor } from '../output/redact.js';
import type { RunIo } from './request.js';

export async function writeReportAfterRun(journalFile: string, file: string, opts: { redactor: Redactor; io: RunIo; json: boolean }): Promise<void> {
  try {
    const { writeRunReport } = await import('../report/write.js');
    const r = writeRunReport(journalFile, file, opts.redactor);
    // stdout stays pure JSON Lines with --output json
    if (!opts.json) opts.io.stdout.write(`Report: ${r.file}\n`);
  } catch (e) {
    opts.io.stderr(`tsbm: warning: could not write the report ${file}: ${opts.redactor.redact((e as Error).message)}\n`);
  }
}
