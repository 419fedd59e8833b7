import { randomBytes } from 'node:crypto';

/** Sortable, human-readable run ids: 20261130-021500-a1b2. */
export function newRunId(now = new Date()): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const stamp = `${now.getUTCFullYear()}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}-${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}`;
  return `${stamp}-${randomBytes(2).toString('hex')}`;
}

const RUN_ID = /^\d{8}-\d{6}-[0-9a-f]{4}$/;
export function isRunId(s: string): boolean {
  return RUN_ID.test(s);
}
