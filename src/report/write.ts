// `tsbm runs report` and `tsbm run --report`: a run's journal (with the runs it resumed) to one
// HTML file. The journal was redacted when written; a redactor given here masks again anything
// it knows, so a report can never show more than the journal it came from.
import { renameSync, writeFileSync } from 'node:fs';
import { readJournal } from '../journal/reader.js';
import { resumeChain } from '../journal/resume.js';
import type { Redactor } from '../output/redact.js';
import { buildReport } from './build.js';
import { renderReportHtml } from './html.js';
import type { ReportModel } from './model.js';

export interface WrittenReport {
  file: string;
  bytes: number;
  hosts: number;
  runs: number;
}

function reportHtmlFor(journalFile: string, redactor?: Redactor): { html: string; model: ReportModel } {
  const chain = resumeChain(readJournal(journalFile));
  let model = buildReport(chain);
  if (redactor) model = redactor.redactDeep(model);
  return { html: renderReportHtml(model), model };
}

export function writeRunReport(journalFile: string, out: string, redactor?: Redactor): WrittenReport {
  const { html, model } = reportHtmlFor(journalFile, redactor);
  // Written whole or not at all: a reader never opens half a report.
  const tmp = `${out}.tmp-${process.pid}`;
  writeFileSync(tmp, html);
  renameSync(tmp, out);
  return { file: out, bytes: Buffer.byteLength(html), hosts: model.hosts.length, runs: model.runs.length };
}
