// Where run journals are kept unless --journal-dir says otherwise.
export const DEFAULT_JOURNAL_DIR = '.tsbm/runs';
