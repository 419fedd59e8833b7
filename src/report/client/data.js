// @ts-check
// Reads the report's embedded data (see src/report/encode.ts) into plain objects once.

/**
 * @typedef {{ task: number, run: number, start: number, dur: number, status: string, msg: string | undefined,
 *   result: number, retries: number, retryMsg: string | undefined, items: number }} Entry
 * @typedef {{ index: number, name: string, state: string, total: number, retries: number,
 *   failure: { task: number, msg: string } | undefined, node: string | undefined, warnings: string[], entries: Entry[],
 *   haystack: string, phaseMs: Map<string, number>, start: number }} Host
 * @typedef {{ name: string, phase: string, module: string }} Task
 * @typedef {{ id: string, playbook: string, inventories: string[], version: string, started: number,
 *   durationMs: number, offsetMs: number, exitCode: number | undefined, finished: boolean,
 *   resumedFrom: string | undefined, badLines: number, options: Record<string, string> }} Run
 * @typedef {{ phase: string, nodes: number, medianMs: number, p95Ms: number, maxMs: number, slowestHost: string }} Phase
 * @typedef {{ task: number, pattern: string, example: string, exampleHost: string,
 *   ended?: { task: number, msg: string }, hosts: string[] }} FailureGroup
 * @typedef {{ hosts: Record<string, number>, results: Record<string, number>, wallMs: number, retries: number,
 *   retriedHosts: { host: string, retries: number, last: string }[], slowestHosts: { host: string, totalMs: number }[],
 *   phases: Phase[], failures: FailureGroup[] }} Summary
 * @typedef {{ generated: number, axisMs: number, runs: Run[], tasks: Task[], hosts: Host[], byName: Map<string, Host>,
 *   warnings: string[], summary: Summary, result: (i: number) => unknown }} RunReport
 */

const ENTRY_FIELDS = 10;

/** @returns {RunReport} */
function loadReport() {
  const raw = JSON.parse(byId('tsbm-report-data').textContent || '{}');
  /** @type {string[]} */
  const strings = raw.strings;
  /** @param {number} i */
  const str = (i) => (i < 0 ? undefined : strings[i]);
  /** @type {Task[]} */
  const tasks = raw.tasks.map((/** @type {number[]} */ t) => ({ name: str(t[0]) || '', phase: str(t[1]) || '', module: str(t[2]) || '' }));
  /** @type {Host[]} */
  const hosts = raw.hosts.map((/** @type {any} */ h, /** @type {number} */ index) => {
    /** @type {Entry[]} */
    const entries = [];
    const e = h.e;
    for (let i = 0; i < e.length; i += ENTRY_FIELDS) {
      entries.push({
        task: e[i],
        run: e[i + 1],
        start: e[i + 2],
        dur: e[i + 3],
        status: raw.statuses[e[i + 4]],
        msg: str(e[i + 5]),
        result: e[i + 6],
        retries: e[i + 7],
        retryMsg: str(e[i + 8]),
        items: e[i + 9],
      });
    }
    const name = str(h.n) || '';
    /** @type {Map<string, number>} */
    const phaseMs = new Map();
    for (const x of entries) {
      const p = tasks[x.task].phase;
      phaseMs.set(p, (phaseMs.get(p) || 0) + x.dur);
    }
    const failure = h.f ? { task: h.f[0], msg: str(h.f[1]) || '' } : undefined;
    const node = h.d === undefined ? undefined : str(h.d);
    const warnings = (h.w || []).map((/** @type {number} */ i) => str(i) || '');
    const words = [name];
    for (const x of entries) {
      if (x.msg) words.push(x.msg);
      if (x.retryMsg) words.push(x.retryMsg);
    }
    words.push(...warnings);
    return {
      index,
      name,
      state: raw.states[h.s],
      total: h.t,
      retries: h.r,
      failure,
      node,
      warnings,
      entries,
      haystack: words.join('\n').toLowerCase(),
      phaseMs,
      start: entries.length ? entries[0].start : 0,
    };
  });
  /** @type {string[]} */
  const values = raw.values;
  /**
   * A result tree back from the values table (see src/report/encode.ts).
   * @param {number} i
   * @returns {unknown}
   */
  const result = (i) => {
    const text = values[i];
    if (text[0] === '[') return text.length === 2 ? [] : text.slice(1, -1).split(',').map((x) => result(Number(x)));
    if (text[0] === '{') {
      /** @type {Record<string, unknown>} */
      const out = {};
      if (text.length === 2) return out;
      const parts = text.slice(1, -1).split(',');
      for (let k = 0; k < parts.length; k += 2) out[strings[Number(parts[k])]] = result(Number(parts[k + 1]));
      return out;
    }
    return JSON.parse(text);
  };
  return {
    result,
    generated: raw.generated,
    axisMs: raw.axisMs,
    runs: raw.runs,
    tasks,
    hosts,
    byName: new Map(hosts.map((/** @type {Host} */ h) => [h.name, h])),
    warnings: raw.warnings,
    summary: raw.summary,
  };
}
