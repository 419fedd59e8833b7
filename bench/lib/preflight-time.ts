// What tsbm run's checks before the first task cost, measured in fresh processes (see
// preflight-child.ts): used by bench/preflight and bench/fleet.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export interface PreflightTime {
  /** Loading the playbook and inventories, cold: a run needs it with or without the checks (the peer). */
  loadMs: number;
  /**
   * The checks, cold: what they add to one run. An upper bound: it includes loading the template
   * engine and computing each host's inventory variables, which the run then needs anyway (it
   * reuses the latter).
   */
  checksColdMs: number;
  /** The checks again, warm (median). */
  checksWarmMs: number;
  errors: number;
  hosts: number;
  /** Per-host evaluations that ran, and hosts that reused one. */
  evaluations: number;
  reused: number;
}

/** The run (of `runs` fresh processes) with the median cold check time. */
export function timePreflight(playbook: string, inventory: string, runs = 3): PreflightTime {
  const out: PreflightTime[] = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(process.execPath, [join(import.meta.dirname, 'preflight-child.js'), playbook, inventory], {
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
    });
    if (r.status !== 0) throw new Error(`preflight-child failed: ${r.stderr}`);
    out.push(JSON.parse(r.stdout.trim().split('\n').pop()!) as PreflightTime);
  }
  return out.sort((a, b) => a.checksColdMs - b.checksColdMs)[Math.floor((out.length - 1) / 2)]!;
}
