// Turns a module's result (or error) into the registered shape Ansible users expect.
import type { ModuleResult } from '../modules/types.js';
import type { Vars } from '../types.js';

export type Registered = Record<string, unknown> & { changed: boolean; failed: boolean };

export const NO_LOG_NOTE = "the output has been hidden due to the fact that 'no_log: true' was specified for this result";

const lines = (s: string): string[] => (s === '' ? [] : s.replace(/\n$/, '').split('\n'));

export function normalizeResult(r: ModuleResult): Registered {
  const out: Registered = { ...r, changed: Boolean(r.changed), failed: Boolean(r.failed) };
  if (typeof r.stdout === 'string' && out.stdout_lines === undefined) out.stdout_lines = lines(r.stdout);
  if (typeof r.stderr === 'string' && out.stderr_lines === undefined) out.stderr_lines = lines(r.stderr);
  return out;
}

export function failedResult(msg: string, extra: Vars = {}): Registered {
  return { ...extra, changed: false, failed: true, msg };
}

export function skippedResult(msg: string): Registered {
  return { changed: false, failed: false, skipped: true, msg };
}

/** Facts a module asked to set on the host (set_fact, gather_facts): `ansible_facts` / `facts`. */
export function factsOf(r: Registered): Vars | undefined {
  const f = (r.ansible_facts ?? r.facts) as unknown;
  return f && typeof f === 'object' && !Array.isArray(f) ? (f as Vars) : undefined;
}

/** The executor action a controller module asked for (meta module): `tsbm_meta`. */
export function metaOf(r: Registered): string | undefined {
  return typeof r.tsbm_meta === 'string' ? r.tsbm_meta : undefined;
}

/** What the events and the registered var carry when a task is no_log. */
export function censor(r: Registered): Registered {
  const out: Registered = { changed: r.changed, failed: r.failed, censored: NO_LOG_NOTE };
  if (r.skipped) out.skipped = true;
  return out;
}
