// Which host lines of a live task fit in the rows left on the terminal: running hosts first
// (they are what the operator waits for), and a "… N more hosts" line when some do not fit.
import type { HostView } from './tty-model.js';

export interface Fitted {
  shown: HostView[];
  /** Hosts left out (a "… N more hosts" line stands for them). */
  hidden: number;
  /** Rows taken, the "more" line included. */
  used: number;
}

/** Rows a host takes: two while it runs with a progress line under it. */
const rowsOf = (h: HostView) => (h.status === undefined && h.progress !== undefined ? 2 : 1);

export function fitHosts(hosts: Iterable<HostView>, room: number): Fitted {
  const all = [...hosts].sort((a, b) => Number(a.status !== undefined) - Number(b.status !== undefined));
  const shown: HostView[] = [];
  let used = 0;
  for (const h of all) {
    // keep a row for the "more" line unless this is the last host
    if (used + rowsOf(h) > room - (shown.length < all.length - 1 ? 1 : 0)) break;
    shown.push(h);
    used += rowsOf(h);
  }
  const hidden = all.length - shown.length;
  return { shown, hidden, used: used + (hidden > 0 ? 1 : 0) };
}
