// The HTML run report as a person sees it, in Debian's chromium (headless): the report of a
// simulated deploy where one node fails (pull) and one retries its BMC (HTTP 503s), and the
// report of a run killed mid-deploy and resumed. Checked: the timeline is drawn (pixels), the
// failed node is marked, search and filters narrow the rows, the node view shows the failure,
// nothing is fetched. Screenshots are kept under test-results/report-browser/ (gitignored; CI keeps test-results/).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { writeRunReport } from '../../src/report/write.js';
import { DEPLOY, runTsbm, spawnTsbm, stateArgs } from '../helpers/fault-cli.js';
import { fleetJournal, writeJournal } from '../helpers/fleet-journal.js';
import { Browser, dumpDom, findChromium, screenshot } from './lab/chromium.js';
import { isRoot } from './lab/run.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const ARTIFACTS = join(ROOT, 'test-results', 'report-browser');
const built = (() => {
  try {
    readFileSync(join(ROOT, 'dist', 'cli', 'main.js'));
    return true;
  } catch {
    return false;
  }
})();
const ready = isRoot && built && findChromium() !== undefined;

/** What the page shows: the row count line and the host labels in view, in order. */
const SHOWN = `(() => ({
  count: document.getElementById('count').textContent,
  labels: [...document.querySelectorAll('#tl-labels .tl-label')].map((e) => ({ host: e.dataset.host, cls: e.className, text: e.textContent })),
  drawnRows: Number(document.getElementById('tl-bars').dataset.drawnRows),
}))()`;

/**
 * Colours on the timeline canvas in row `row` (device pixels), as counts per colour of
 * interest: failed red, the retry band, and any bar at all.
 */
const ROW_PIXELS = (row: number) => `(() => {
  const i = ${row};
  const c = document.getElementById('tl-bars');
  const ctx = c.getContext('2d');
  const dpr = window.devicePixelRatio || 1;
  const rowH = c.clientHeight / Number(c.dataset.rows || 1);
  const y0 = Math.ceil(i * rowH * dpr);
  const d = ctx.getImageData(0, y0, c.width, Math.max(1, Math.floor(rowH * dpr) - 1)).data;
  const out = { red: 0, retry: 0, bar: 0 };
  for (let p = 0; p < d.length; p += 4) {
    const [r, g, b, a] = [d[p], d[p + 1], d[p + 2], d[p + 3]];
    if (a < 200) continue;
    if (r > 200 && g < 80 && b < 80) out.red++;
    if (r < 50 && g < 50 && b < 50) out.retry++;
    if (!(r > 240 && g > 240 && b > 240)) out.bar++;
  }
  return out;
})()`;

describe.skipIf(!ready)('the HTML report in a real browser (needs root for e2e, `npm run build`, chromium)', { timeout: 300_000 }, () => {
  const dirs: string[] = [];
  const labs: Lab[] = [];
  let browser: Browser;
  let report: string;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const dir = mkdtempSync(join(tmpdir(), 'tsbm-report-e2e-'));
    dirs.push(dir);
    const lab = await startLab({ nodes: 4, dir, bootDelayMs: 150, powerDelayMs: 30, faults: 'node02:bmc_503=0.3;node03:pull_fail' });
    labs.push(lab);
    const state = stateArgs(dir);
    report = join(dir, 'report.html');
    const r = await runTsbm(['run', DEPLOY, '-i', lab.inventory, '--output', 'json', ...state.args, '--report', report], {
      cwd: dir,
      env: state.env,
      timeoutMs: 240_000,
    });
    expect(r.code, r.stderr).toBe(2);
    browser = await Browser.launch('1400,1000');
  });

  afterAll(async () => {
    await browser?.close();
    for (const l of labs) await l.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('--dump-dom: four rows drawn, node03 marked failed, the failure and the retries in the summary', () => {
    const dom = dumpDom(pathToFileURL(report).href);
    writeFileSync(join(ARTIFACTS, 'report-dump.html'), dom);
    expect(dom).toMatch(/<span id="count"[^>]*>4 of 4 nodes<\/span>/);
    expect(dom).toMatch(/<canvas id="tl-bars"[^>]*data-drawn-rows="4"/);
    expect(dom).toMatch(/<div class="tl-label st-failed" data-host="node03"[^>]*><span class="mark">✖ <\/span>node03<\/div>/);
    for (const ok of ['node01', 'node02', 'node04']) expect(dom).toMatch(new RegExp(`<div class="tl-label st-ok" data-host="${ok}"`));
    const failures = dom.slice(dom.indexOf('id="failures"'));
    expect(failures).toMatch(/Pull the image/);
    expect(failures).not.toMatch(/Report the failure<\/td>/);
    expect(failures).toMatch(/simulated pull failure/);
    const retries = dom.slice(dom.indexOf('id="retries"'));
    expect(retries).toMatch(/>node02<\/a><\/td><td class="num">\d+<\/td>/);
    expect(retries).toMatch(/HTTP 503/);
    screenshot(pathToFileURL(report).href, join(ARTIFACTS, 'report-deploy.png'), '1400,1100');
  });

  it('the timeline is drawn: bars on every row, red on node03, the retry band on node02; nothing fetched', async () => {
    await browser.navigate(pathToFileURL(report).href);
    expect(await browser.evaluate<string>('document.body.dataset.ready')).toBe('true');
    const shown = await browser.evaluate<{ count: string; labels: { host: string }[] }>(SHOWN);
    expect(shown.labels.map((l) => l.host)).toEqual(['node01', 'node02', 'node03', 'node04']);
    const rows = [];
    for (let i = 0; i < 4; i++) rows.push(await browser.evaluate<{ red: number; retry: number; bar: number }>(ROW_PIXELS(i)));
    for (const r of rows) expect(r.bar).toBeGreaterThan(1000);
    expect(rows[2]!.red).toBeGreaterThan(0); // node03's failed pull (and its state gutter)
    for (const i of [0, 1, 3]) expect(rows[i]!.red).toBe(0);
    expect(rows[1]!.retry).toBeGreaterThan(0);
    // the page made no request but for itself
    const requests = browser.events.filter((e) => e.method === 'Network.requestWillBeSent').map((e) => (e.params.request as { url: string }).url);
    expect(requests.filter((u) => !u.startsWith('file://'))).toEqual([]);
  });

  it('search narrows the rows, by node name and by what a message says', async () => {
    await browser.navigate(pathToFileURL(report).href);
    const search = async (text: string) => {
      await browser.evaluate(`(() => { const s = document.getElementById('search'); s.focus(); s.select(); })()`);
      await browser.key('Backspace', 'Backspace', 8);
      if (text) await browser.type(text);
      return browser.evaluate<{ count: string; labels: { host: string; cls: string }[]; drawnRows: number }>(SHOWN);
    };
    let s = await search('node03');
    expect(s.count).toBe('1 of 4 nodes');
    expect(s.labels.map((l) => l.host)).toEqual(['node03']);
    expect(s.drawnRows).toBe(1);
    s = await search('simulated pull');
    expect(s.labels.map((l) => l.host)).toEqual(['node03']);
    s = await search('HTTP 503');
    expect(s.labels.map((l) => l.host)).toEqual(['node02']);
    s = await search('no-such-node');
    expect(s.count).toBe('0 of 4 nodes');
    expect(s.labels).toEqual([]);
    s = await search('');
    expect(s.count).toBe('4 of 4 nodes');
    // the "failed" chip, then sort by time in tasks
    await browser.evaluate(`document.querySelector('.chip[data-state="failed"]').click()`);
    s = await browser.evaluate(SHOWN);
    expect(s.labels.map((l) => l.host)).toEqual(['node03']);
    expect(await browser.evaluate<string>('location.hash')).toBe('#state=failed');
    await browser.evaluate(`document.querySelector('.chip[data-state="failed"]').click()`);
  });

  it('clicking the failed node opens its tasks with the failure and the redacted result', async () => {
    await browser.navigate(pathToFileURL(report).href);
    await browser.evaluate(`document.querySelector('.tl-label[data-host="node03"]').click()`);
    const node = await browser.evaluate<{ hidden: boolean; title: string; rows: string[][]; failure: string }>(`(() => {
      const n = document.getElementById('node');
      return {
        hidden: n.hidden,
        title: n.querySelector('h2').textContent,
        failure: n.querySelector('.failure').textContent,
        rows: [...n.querySelectorAll('tr.entry')].map((tr) => [...tr.children].slice(0, 3).map((td) => td.textContent)),
      };
    })()`);
    expect(node.hidden).toBe(false);
    expect(node.title).toBe('node03 failed');
    // the deploy's rescue powers the node off and fails it with the cause: the page shows that
    // last failure (what decided the node's state) and the failed (rescued) pull among the tasks
    expect(node.failure).toMatch(/^Report the failure: .*after "Pull the image" failed: .*simulated pull failure/);
    expect(node.rows).toContainEqual(['Pull the image', 'deploy', 'rescued']);
    // After the plays the run ends every node that did not finish safe once more, read back
    // (its own row, ok or changed): the cleanup's failure stays the last failure shown.
    const endSafe = (r: string[]) => r[0]?.startsWith('End the node safe');
    expect(node.rows.filter((r) => !endSafe(r)).at(-1)).toEqual(['Report the failure', 'cleanup-on-failure', 'failed']);
    for (const r of node.rows.filter(endSafe)) expect(r[2]).toMatch(/^(ok|changed)$/);
    expect(await browser.evaluate<string>('location.hash')).toBe('#node=node03');
    writeFileSync(join(ARTIFACTS, 'report-node03.png'), await browser.screenshotPng());
  });

  it('6 nodes, 2 failing the same way: one group under the step that failed, the whole message on demand, linked to its nodes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsbm-report-e2e-groups-'));
    dirs.push(dir);
    const lab = await startLab({ nodes: 6, dir, bootDelayMs: 150, powerDelayMs: 30, faults: 'node02:pull_fail;node05:pull_fail' });
    labs.push(lab);
    const state = stateArgs(dir);
    const out = join(dir, 'groups.html');
    const r = await runTsbm(['run', DEPLOY, '-i', lab.inventory, '--output', 'json', ...state.args, '--report', out], { cwd: dir, env: state.env, timeoutMs: 240_000 });
    expect(r.code, r.stderr).toBe(2);
    await browser.navigate(pathToFileURL(out).href);
    const GROUPS = `[...document.querySelectorAll('#failures tr.failure-group')].map((tr) => ({
      cells: [...tr.children].map((td) => td.innerText),
      links: [...tr.querySelectorAll('a.host-link')].map((a) => a.textContent),
      open: tr.querySelector('.cause').classList.contains('open'),
    }))`;
    let groups = await browser.evaluate<{ cells: string[]; links: string[]; open: boolean }[]>(GROUPS);
    expect(groups).toHaveLength(1);
    const [count, step, cause] = groups[0]!.cells;
    expect(count).toBe('2');
    expect(step).toMatch(/^Pull the image\ndeploy$/); // the step that failed, not the rescue's "Report the failure"
    expect(cause).toMatch(/^podman pull .* failed \(rc 125\): .*simulated pull failure.*\nwhole message$/s);
    expect(groups[0]!.links).toEqual(['node02', 'node05']);
    // the whole message, and how the rescue ended the node, on demand
    await browser.evaluate(`document.querySelector('#failures .cause button').click()`);
    groups = await browser.evaluate(GROUPS);
    expect(groups[0]!.open).toBe(true);
    expect(groups[0]!.cells[2]).toMatch(/check the image reference, the registry and the ramdisk network\nas node0[25] said it\nthen Report the failure: node powered off, virtual media ejected .*after "Pull the image" failed: podman pull/s);
    const box = await browser.evaluate<{ x: number; y: number; width: number; height: number }>(
      `(() => { const r = document.getElementById('failures').getBoundingClientRect(); return { x: r.x, y: r.y + window.scrollY, width: r.width, height: r.height }; })()`,
    );
    writeFileSync(join(ARTIFACTS, 'report-failure-groups.png'), await browser.screenshotPng({ ...box, x: 0, width: box.x * 2 + box.width }));
    // each node of the group opens its node view
    await browser.evaluate(`document.querySelectorAll('#failures a.host-link')[1].click()`);
    expect(await browser.evaluate<string>(`document.querySelector('#node h2').textContent`)).toBe('node05 failed');
  });

  it('1000 nodes: only the rows in view are drawn; search and the failed filter narrow them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsbm-report-e2e-fleet-'));
    dirs.push(dir);
    writeJournal(join(dir, 'fleet.jsonl'), fleetJournal({ nodes: 1000, failEvery: 50, unreachableEvery: 97, retryEvery: 10 }));
    const out = join(dir, 'fleet.html');
    writeRunReport(join(dir, 'fleet.jsonl'), out);
    await browser.navigate(pathToFileURL(out).href);
    let s = await browser.evaluate<{ count: string; labels: { host: string }[]; drawnRows: number }>(SHOWN);
    expect(s.count).toBe('1000 of 1000 nodes');
    expect(s.drawnRows).toBeGreaterThan(50);
    expect(s.drawnRows).toBeLessThan(1000); // a window of the rows, not all of them
    await browser.evaluate(`(() => { const s = document.getElementById('search'); s.focus(); })()`);
    await browser.type('node0500');
    s = await browser.evaluate(SHOWN);
    expect(s.count).toBe('1 of 1000 nodes');
    expect(s.labels.map((l) => l.host)).toEqual(['node0500']); // few rows: tall again, with names
    await browser.evaluate(`(() => { const s = document.getElementById('search'); s.value = ''; s.dispatchEvent(new Event('input')); })()`);
    await browser.evaluate(`document.querySelector('.chip[data-state="failed"]').click()`);
    s = await browser.evaluate(SHOWN);
    expect(s.count).toBe('20 of 1000 nodes');
    expect(s.labels).toHaveLength(20);
    expect(s.labels.every((l) => /^node\d{4}$/.test(l.host))).toBe(true);
    // sorted by time in tasks, longest first: the first row is the slowest node
    await browser.evaluate(`(() => { const s = document.getElementById('sort'); s.value = 'duration'; s.dispatchEvent(new Event('change')); })()`);
    const first = (await browser.evaluate<{ labels: { host: string }[] }>(SHOWN)).labels[0]!.host;
    const totals = await browser.evaluate<Record<string, number>>(
      `(() => { const d = JSON.parse(document.getElementById('tsbm-report-data').textContent); return Object.fromEntries(d.hosts.map((h) => [d.strings[h.n], h.t])); })()`,
    );
    const failedTotals = s.labels.map((l) => totals[l.host]!);
    expect(totals[first]).toBe(Math.max(...failedTotals));
    writeFileSync(join(ARTIFACTS, 'report-fleet-failed.png'), await browser.screenshotPng());
  });

  it('a run killed mid-deploy and resumed: one report with both runs, every node deployed in the end', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsbm-report-e2e-resume-'));
    dirs.push(dir);
    const lab = await startLab({ nodes: 3, dir, bootDelayMs: 150, powerDelayMs: 30 });
    labs.push(lab);
    const state = stateArgs(dir);
    const args = ['run', DEPLOY, '-i', lab.inventory, '--output', 'json', ...state.args];
    const first = spawnTsbm(args, { cwd: dir, env: state.env, timeoutMs: 240_000 });
    let out = '';
    // killed as soon as a node has pulled its image: the others are mid-way through the pull
    first.child.stdout!.on('data', (d: Buffer | string) => {
      out += d.toString();
      if (!first.child.killed && /"type":"host_result","time":\d+,"host":"[^"]+","task":"Pull the image"/.test(out)) first.child.kill('SIGKILL');
    });
    const killed = await first.done;
    expect(killed.signal).toBe('SIGKILL');
    // the killed run alone: what it did, and the tasks it never finished
    const crashed = join(dir, 'crashed.html');
    const rep = await runTsbm(['runs', 'report', 'last', '-o', crashed, ...state.args], { cwd: dir, env: state.env, timeoutMs: 60_000 });
    expect(rep.code, rep.stderr).toBe(0);
    await browser.navigate(pathToFileURL(crashed).href);
    const crash = await browser.evaluate<{ head: string; cards: string }>(
      `({ head: document.getElementById('head').textContent, cards: document.getElementById('cards').textContent })`,
    );
    expect(crash.head).toMatch(/did not finish/);
    expect(crash.cards).toMatch(/[1-9]\d*unfinished/);
    const resumedReport = join(dir, 'resumed.html');
    const second = await runTsbm([...args, '--resume', 'last', '--report', resumedReport], { cwd: dir, env: state.env, timeoutMs: 240_000 });
    expect(second.code, second.stderr).toBe(0);

    await browser.navigate(pathToFileURL(resumedReport).href);
    const page = await browser.evaluate<{ head: string; cards: string; runs: string[]; count: string }>(`(() => ({
      head: document.getElementById('head').textContent,
      cards: document.getElementById('cards').textContent,
      runs: [...document.querySelectorAll('#summary table')[0].querySelectorAll('tr')].slice(1).map((tr) => tr.textContent),
      count: document.getElementById('count').textContent,
    }))()`);
    expect(page.head).toMatch(/resumed: \d{8}-\d{6}-\w+ → \d{8}-\d{6}-\w+/);
    expect(page.runs).toHaveLength(2);
    expect(page.runs[0]).toMatch(/did not finish/);
    expect(page.runs[1]).toMatch(/exit 0/);
    expect(page.cards).toMatch(/^3nodes3ok0failed/);
    expect(page.count).toBe('3 of 3 nodes');
    // the tasks done before the kill are drawn too: every row has bars in both runs' spans
    for (let i = 0; i < 3; i++) expect((await browser.evaluate<{ bar: number }>(ROW_PIXELS(i))).bar).toBeGreaterThan(1000);
    writeFileSync(join(ARTIFACTS, 'report-resumed.png'), await browser.screenshotPng());
    screenshot(pathToFileURL(resumedReport).href, join(ARTIFACTS, 'report-resumed-full.png'), '1400,1100');
  });
});
