// What a journal line holds: a header written first, then the run's events as the bus emitted
// them (already redacted).
import type { TsbmEvent } from '../output/events.js';

export interface JournalHeader {
  type: 'journal_start';
  time: number;
  runId: string;
  version: string;
  playbook: string; // absolute path
  playbookHash: string; // sha256 over the playbook and every file it loaded
  inventories: string[];
  inventoryHash: string;
  options: Record<string, unknown>; // extra vars redacted
  resumedFrom?: string;
}

export type JournalRecord = JournalHeader | TsbmEvent;
