// The work behind `tsbm runs report RUN -o FILE`.
import { resolveRun } from '../journal/reader.js';
import { writeRunReport } from '../report/write.js';
import { checkOutputFile } from './output-file.js';

export function runsReportCommand(ref: string, opts: { journalDir: string; output: string }): string {
  checkOutputFile('--output', opts.output);
  const journal = resolveRun(opts.journalDir, ref);
  const r = writeRunReport(journal, opts.output);
  const runs = r.runs > 1 ? ` (${r.runs} runs of a resume chain)` : '';
  return `report of ${r.hosts} node${r.hosts === 1 ? '' : 's'}${runs} written to ${r.file} (${Math.ceil(r.bytes / 1024)} KiB)\n`;
}
