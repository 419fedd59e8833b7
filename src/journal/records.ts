// What a journal line holds: a header written first, then the run's events as the bus emitted
// them (already redacted).
import type { TsbmEvent } from '../output/events.js';
import type { RunScope } from './scope.js';

export interface JournalHeader {
  type: 'journal_start';
  time: number;
  runId: string;
  version: string;
  playbook: string; // absolute path
  playbookHash: string; // sha256 over the playbook and every file it loaded
  inventories: string[];
  inventoryHash: string;
  /** Run options as given; extra vars by name only (`extraVars: string[]`), never values. */
  options: Record<string, unknown>;
  /** What the run targets and how, for --resume (absent in journals of older versions). */
  scope?: RunScope;
  resumedFrom?: string;
}

export type JournalRecord = JournalHeader | TsbmEvent;
