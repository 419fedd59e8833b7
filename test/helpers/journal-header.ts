// A minimal journal header for journal tests: what a run writes first, with fixed hashes.
import type { JournalHeader } from '../../src/journal/records.js';

export function journalHeader(runId: string, opts: { time?: number; resumedFrom?: string } = {}): JournalHeader {
  return {
    type: 'journal_start',
    time: opts.time ?? 1,
    runId,
    version: '0',
    playbook: '/p.yml',
    playbookHash: 'h',
    inventories: [],
    inventoryHash: 'i',
    options: {},
    ...(opts.resumedFrom ? { resumedFrom: opts.resumedFrom } : {}),
  };
}
