// Turns a module's result (or error) into the registered shape Ansible users expect.
import type { ModuleResult } from '../module-api/types.js';
import type { Vars } from '../types.js';

export type Registered = Record<string, unknown> & { changed: boolean; failed: boolean };

const NO_LOG_NOTE = "the output has been hidden due to the fact that 'no_log: true' was specified for this result";

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

const isMap = (v: unknown): v is Vars => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Host variables a module asked for: `tsbm_set_vars` keys become variables (set_fact);
 * `facts` / `ansible_facts` mappings are merged into the host variables of the same name
 * (gather_facts: `facts.memory.total_mb`).
 */
export function hostVarsFrom(r: Registered): Vars | undefined {
  const out: Vars = {};
  if (isMap(r.tsbm_set_vars)) Object.assign(out, r.tsbm_set_vars);
  for (const k of ['facts', 'ansible_facts'] as const) if (isMap(r[k])) out[k] = r[k];
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The executor action a controller module asked for (meta module): `tsbm_meta`. */
export function metaOf(r: Registered): string | undefined {
  return typeof r.tsbm_meta === 'string' ? r.tsbm_meta : undefined;
}

/**
 * Check mode: a module (wait_agent) saying the host is not booted into what its later SSH
 * steps need, with the reason: `tsbm_check_after_boot`.
 */
export function afterBootOf(r: Registered): string | undefined {
  return typeof r.tsbm_check_after_boot === 'string' ? r.tsbm_check_after_boot : undefined;
}

/** What the events and the registered var carry when a task is no_log. */
export function censor(r: Registered): Registered {
  const out: Registered = { changed: r.changed, failed: r.failed, censored: NO_LOG_NOTE };
  if (r.skipped) out.skipped = true;
  return out;
}
