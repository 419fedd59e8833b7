// When plain output prints a wait's progress line: at once, then at growing intervals (10 s,
// then as long again as the wait has lasted: 0, 10, 20, 40, 80 s...), so a long wait of a fleet
// is a few lines per host rather than one every 10 s. A line that says something new (not only
// other numbers: the last error changed, the wait says it is stuck) prints sooner, still at most
// one per 10 s; the last one (current reached total) always prints.

const MIN_GAP_MS = 10_000;

interface Seen {
  first: number;
  last: number;
  gist: string;
}

/** The message without its numbers (elapsed seconds, attempt counts, ports): what it says. */
const gistOf = (message: string) => message.replace(/\d+(?:\.\d+)?/g, '#');

export class ProgressPace {
  private readonly seen = new Map<string, Seen>();

  /** Whether to print a progress line of `key` (host and task) now. */
  due(key: string, time: number, message: string, finished: boolean): boolean {
    const s = this.seen.get(key);
    const gist = gistOf(message);
    if (s === undefined) {
      this.seen.set(key, { first: time, last: time, gist });
      return true;
    }
    const since = time - s.last;
    const news = gist !== s.gist && since >= MIN_GAP_MS;
    if (!finished && !news && since < Math.max(MIN_GAP_MS, s.last - s.first)) return false;
    s.last = time;
    s.gist = gist;
    return true;
  }

  clear(): void {
    this.seen.clear();
  }
}
