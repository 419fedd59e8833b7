// What an HTML run report shows, built from run journals (already redacted when written): the
// runs of a resume chain on one time axis, each host's task entries, and the summary figures.
import type { HostStats, HostStatus } from '../output/events.js';
import type { NodeEnd } from '../output/host-outcome.js';

/** A task's outcome on a host, plus `unfinished`: started and never ended (killed, crashed). */
export type EntryStatus = HostStatus | 'unfinished';

/** Where a host stands at the end of the report's last run. */
export type HostState = 'ok' | 'failed' | 'unreachable' | 'unfinished';

export interface ReportRun {
  id: string;
  playbook: string;
  inventories: string[];
  version: string;
  /** Epoch ms. */
  started: number;
  durationMs: number;
  /** Where this run starts on the report's time axis (earlier runs of a resume chain come first). */
  offsetMs: number;
  exitCode: number | undefined;
  finished: boolean;
  resumedFrom: string | undefined;
  /** Journal lines that could not be read (a torn last line after a crash). */
  badLines: number;
  /** A few run options worth showing (limit, tags, check, forks...), already redacted. */
  options: Record<string, string>;
}

export interface ReportTask {
  name: string;
  /** The role the task comes from, else the play: the unit "slowest phases" is counted in. */
  phase: string;
  module: string;
  /** In a block's rescue section: cleanup after a failure (journals from before it was recorded: absent). */
  rescue?: boolean;
}

export interface ReportEntry {
  /** Index into ReportModel.tasks. */
  task: number;
  /** Index into ReportModel.runs. */
  run: number;
  /** Start on the report's time axis, ms. */
  startMs: number;
  durationMs: number;
  status: EntryStatus;
  msg: string | undefined;
  /** The module result (redacted as written; very long strings and lists cut). */
  result: Record<string, unknown> | undefined;
  /** until/retries attempts and BMC retries inside the module. */
  retries: number;
  retryMsg: string | undefined;
  /** Loop items seen (0 for a task without a loop). */
  items: number;
}

export interface ReportHost {
  name: string;
  state: HostState;
  stats: HostStats;
  entries: ReportEntry[];
  /** Time the host spent in tasks (sum of its per-run spans), ms. */
  totalMs: number;
  retries: number;
  warnings: string[];
  /** The failure that decided the host's state, if any (task -1: none of the tasks; the run's reason, e.g. a refused lock). */
  failure: { task: number; msg: string } | undefined;
  /** The node's record as the last run left it (runs that keep node records). */
  node?: NodeEnd;
}

export interface PhaseSummary {
  phase: string;
  /** Nodes that ran the phase; the figures are over each node's time in it. */
  nodes: number;
  medianMs: number;
  p95Ms: number;
  maxMs: number;
  slowestHost: string;
}

/**
 * Nodes that failed at the same step for the same cause. The step is the one that failed first:
 * for a failure a rescue section handled (the deploy's cleanup), the rescued step, not the
 * rescue's last task that fails the node on purpose.
 */
export interface FailureGroup {
  /** The step that failed (index into tasks). */
  task: number;
  /** Its message with node names, numbers, addresses and ids replaced: the cause the nodes share. */
  pattern: string;
  /** One node's message, whole. */
  example: string;
  /** The node `example` is from. */
  exampleHost: string;
  /** How that node ended when the failure was rescued and the rescue failed it (task, whole message). */
  ended?: { task: number; msg: string };
  hosts: string[];
}

export interface ReportSummary {
  hosts: Record<HostState, number>;
  results: Record<EntryStatus, number>;
  wallMs: number;
  retries: number;
  retriedHosts: { host: string; retries: number; last: string }[];
  slowestHosts: { host: string; totalMs: number }[];
  phases: PhaseSummary[];
  failures: FailureGroup[];
}

export interface ReportModel {
  generated: number;
  runs: ReportRun[];
  tasks: ReportTask[];
  hosts: ReportHost[];
  /** Length of the time axis, ms. */
  axisMs: number;
  warnings: string[];
  summary: ReportSummary;
}

export const emptyStats = (): HostStats => ({ ok: 0, changed: 0, unreachable: 0, failed: 0, skipped: 0, rescued: 0, ignored: 0 });
