// Fault and fuzz tests record one row per fault or input class here and call
// `flushFaultRows(file)` in their afterAll: the rows go to test-results/fault-rows/<file>.json
// (one file per test file, so parallel test files never write the same file; written atomically).
// test-results/ is not tracked: `npm run faults` renders the table (test-results/FAULTS.md),
// so a test run leaves the work tree as it found it.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface FaultRow {
  /** Fault or input class, e.g. "BMC 503 storm" or "arbitrary YAML -> loadInventories". */
  fault: string;
  /** How it was injected or generated. */
  how: string;
  /** Cases tried (runs, kill points, generated inputs). */
  cases: number;
  /** What happened, as asserted by the test. */
  outcome: string;
  /** pass when every assertion about it held; fail otherwise; skipped when it could not run here (e.g. needs root). */
  result: 'pass' | 'fail' | 'skipped';
}

const ROWS_DIR = resolve(import.meta.dirname, '..', '..', 'test-results', 'fault-rows');

const rows = new Map<string, FaultRow[]>();

/** Records one row for the test file `source` (its base name, e.g. "faults-lab"). */
export function recordFault(source: string, row: FaultRow): void {
  const list = rows.get(source) ?? [];
  list.push(row);
  rows.set(source, list);
}

function writeAtomic(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

/** Writes this file's rows (see the top of this file for where they go). */
export function flushFaultRows(source: string): void {
  const mine = rows.get(source);
  if (!mine?.length) return;
  mkdirSync(ROWS_DIR, { recursive: true });
  writeAtomic(join(ROWS_DIR, `${source}.json`), `${JSON.stringify(mine, null, 2)}\n`);
}

/** Runs a test body and records its row as pass or fail (the failure rethrown for vitest). */
export async function tryFault<T>(source: string, row: Omit<FaultRow, 'result'>, body: () => Promise<T> | T): Promise<T> {
  try {
    const v = await body();
    recordFault(source, { ...row, result: 'pass' });
    return v;
  } catch (e) {
    recordFault(source, { ...row, outcome: `FAILED: ${(e as Error).message.split('\n')[0]}`, result: 'fail' });
    throw e;
  }
}
