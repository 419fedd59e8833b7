// Mutable state of one run: per-host facts, stats and play status, plus the run's knobs.
import type { HostStats } from '../output/events.js';
import type { Handler } from '../playbook/model.js';
import type { Vars } from '../types.js';

export interface HostState {
  name: string;
  /** Registered results and set_fact values (persist across plays, like Ansible). */
  facts: Vars;
  stats: HostStats;
  /** Failed in the current play (leaves the play). */
  failed: boolean;
  unreachable: boolean;
  /** meta: end_host in the current play. */
  ended: boolean;
  /** Handlers notified and not yet run. */
  notified: Set<Handler>;
  /** Set when the host ever failed or was unreachable in the run (for the exit code). */
  everFailed: boolean;
  everUnreachable: boolean;
  /** Taken out of the rest of the run by any_errors_fatal / max_fail_percentage (as Ansible does). */
  stopped: boolean;
  /**
   * Check mode: why the host's own target (SSH) steps cannot be checked now, because the run
   * would boot it first (a ramdisk check mode never boots). Those steps report "would run
   * after boot" instead of connecting.
   */
  afterBoot?: string;
}

const emptyStats = (): HostStats => ({
  ok: 0,
  changed: 0,
  unreachable: 0,
  failed: 0,
  skipped: 0,
  rescued: 0,
  ignored: 0,
});

function newHostState(name: string): HostState {
  return {
    name,
    facts: {},
    stats: emptyStats(),
    failed: false,
    unreachable: false,
    ended: false,
    notified: new Set(),
    everFailed: false,
    everUnreachable: false,
    stopped: false,
  };
}

export class RunState {
  readonly hosts = new Map<string, HostState>();
  /** Set when the operator interrupted: no new tasks are scheduled. */
  interrupted = false;
  /** An error that stops the whole run (e.g. the journal cannot record); implies interrupted. */
  fatal: Error | undefined;
  /** Per-host setup when a host is first seen (restoring --resume state). */
  onNewHost: ((h: HostState) => void) | undefined;
  /**
   * Hosts the run left before they reached the end of the playbook for a reason of the run's
   * own (an interrupt, a stopped run): never reported as done.
   */
  readonly unfinished = new Set<string>();
  /**
   * Set when a batch failed as a whole (or over max_fail_percentage / any_errors_fatal): the run
   * ends after that play, as ansible-playbook's does. Holds the reason.
   */
  runStop: string | undefined;
  /** --start-at-task not yet reached (cleared when found). */
  startAtTask: string | undefined;

  host(name: string): HostState {
    let h = this.hosts.get(name);
    if (!h) {
      h = newHostState(name);
      this.hosts.set(name, h);
      this.onNewHost?.(h);
    }
    return h;
  }
}
