// What clients asked the fake BMC, for tests and benchmarks: every request line in order, counts
// by method, and the most requests it was handling at once.
export class RequestLog {
  private readonly seen: string[] = [];
  private readonly byMethod = new Map<string, number>();
  private inFlight = 0;
  private most = 0;

  /** A request arrived; returns the function to call when its answer is done. */
  record(method: string, url: string): () => void {
    this.byMethod.set(method, (this.byMethod.get(method) ?? 0) + 1);
    this.seen.push(`${method} ${url}`);
    this.inFlight++;
    this.most = Math.max(this.most, this.inFlight);
    return () => this.inFlight--;
  }

  /** Every request so far, as `METHOD /path?query`. */
  requests(): string[] {
    return [...this.seen];
  }

  /** Requests by method, and only those whose path and query contain `pathPart` when given. */
  count(method?: string, pathPart?: string): number {
    if (pathPart !== undefined) return this.seen.filter((r) => (!method || r.startsWith(`${method} `)) && r.includes(pathPart)).length;
    if (method) return this.byMethod.get(method) ?? 0;
    return [...this.byMethod.values()].reduce((a, b) => a + b, 0);
  }

  /** Most requests in flight at once. */
  peak(): number {
    return this.most;
  }
}
