// `serial`: split a play's hosts into batches. Numbers are host counts, "N%" a share of the
// play's hosts (rounded down, at least 1); the last entry repeats until hosts run out.
import type { SerialSpec } from '../playbook/model.js';

export function batches(hosts: readonly string[], serial: SerialSpec | undefined): string[][] {
  if (!serial || serial.length === 0) return hosts.length > 0 ? [[...hosts]] : [];
  const sizes = serial.map((s) => {
    if (typeof s === 'number') return s;
    const pct = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(s);
    return pct ? Math.max(1, Math.floor((hosts.length * Number(pct[1])) / 100)) : Number(s);
  });
  const out: string[][] = [];
  let i = 0;
  for (let b = 0; i < hosts.length; b++) {
    const raw = sizes[Math.min(b, sizes.length - 1)]!;
    const n = Number.isFinite(raw) && raw > 0 ? Math.floor(raw) : hosts.length;
    out.push(hosts.slice(i, i + Math.max(1, n)));
    i += Math.max(1, n);
  }
  return out;
}
