// Mutable state of one run: per-host facts, stats and play status, plus the run's knobs.
import type { HostStats, HostStatus } from '../output/events.js';
import type { HostEnd } from '../output/host-outcome.js';
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
  /** The failure that ended the host (task: message), for its outcome. */
  failure?: string;
  /** Its node record as the run found it (`tsbm_node`), when a provisioning play admitted it. */
  node?: Vars;
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
  /** Why each unfinished host was left (the first reason given). */
  private readonly cut = new Map<string, string>();
  /**
   * Set when a batch failed as a whole (or over max_fail_percentage / any_errors_fatal): the run
   * ends after that play, as ansible-playbook's does. Holds the reason.
   */
  runStop: string | undefined;
  /** --start-at-task not yet reached (cleared when found). */
  startAtTask: string | undefined;

  /** The run left `host` before the end of the playbook, for `reason` (an interrupt, a refused lock). */
  leave(host: string, reason: string): void {
    this.host(host); // a host of a play never reached is still the run's
    this.unfinished.add(host);
    if (!this.cut.has(host)) this.cut.set(host, reason);
  }

  /** Records what a task's status does to its host: a failure or an unreachable host ends it. */
  fell(host: string, status: HostStatus, at: { task: string; msg: string }): void {
    const h = this.host(host);
    if (status === 'failed') {
      h.failed = true;
      h.everFailed = true;
    } else if (status === 'unreachable') {
      h.unreachable = true;
      h.everUnreachable = true;
    } else if (status === 'interrupted') this.leave(host, `interrupted during "${at.task}"`);
    else return;
    if (status !== 'interrupted') h.failure ??= `${at.task}: ${at.msg}`;
  }

  /**
   * How each host ended: its own failure first (failed or unreachable); else unfinished when the
   * run left it before the end of the playbook (an interrupt, a stopped run, handlers still due,
   * taken out by max_fail_percentage / any_errors_fatal); else ok.
   */
  ends(): Record<string, HostEnd> {
    const out: Record<string, HostEnd> = {};
    for (const h of this.hosts.values()) {
      if (h.everUnreachable || h.everFailed) {
        out[h.name] = { outcome: h.everUnreachable ? 'unreachable' : 'failed', ...(h.failure ? { reason: h.failure } : {}) };
      } else if (this.unfinished.has(h.name) || h.stopped || (this.interrupted && h.notified.size > 0)) {
        const reason = this.cut.get(h.name) ?? (h.stopped ? 'the play stopped for every host (any_errors_fatal or max_fail_percentage)' : 'handlers still to run when the run stopped');
        out[h.name] = { outcome: 'unfinished', reason };
      } else out[h.name] = { outcome: 'ok' };
    }
    return out;
  }

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
