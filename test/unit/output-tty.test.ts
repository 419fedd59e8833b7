import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { EventBus } from '../../src/output/events.js';
import { attach } from '../../src/output/renderers/tty.js';
import { MemoryStream, rescuedRun, sampleRun, T0 } from './output-sequence.js';

/** A tiny terminal: applies text, newlines and the escapes the renderer uses to a line buffer. */
function screen(output: string): string[] {
  const lines: string[] = [''];
  let row = 0;
  const re = /\x1b\[([0-9;?]*)([A-Za-z])|\n|\r|[^\x1b\n\r]+/g;
  for (const m of output.matchAll(re)) {
    const tok = m[0];
    if (tok === '\n') {
      row++;
      if (lines.length <= row) lines.push('');
    } else if (tok === '\r') {
      // carriage return: the renderer always rewrites whole lines, so nothing to do
    } else if (m[2] === 'F' || m[2] === 'A') {
      row = Math.max(0, row - Number(m[1] || 1));
    } else if (m[2] === 'J') {
      lines.length = row + 1;
      lines[row] = '';
    } else if (m[2] === 'K') {
      lines[row] = '';
    } else if (m[2] === undefined) {
      lines[row] = (lines[row] ?? '') + tok;
    }
    // colours (m), cursor show/hide (h/l) and column 0 (G: lines are always rewritten whole) change nothing visible here
  }
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

// listr2 wraps to process.stdout's width (the CLI draws on stdout); tests pin it per case.
const realColumns = Object.getOwnPropertyDescriptor(process.stdout, 'columns');
const setColumns = (columns: number) =>
  Object.defineProperty(process.stdout, 'columns', { value: columns, configurable: true, writable: true });

beforeAll(async () => {
  // warm listr2 and its lazily imported helpers so fake-timer tests see a drawn frame
  const bus = new EventBus();
  const r = attach(bus, {
    stream: new MemoryStream({ columns: 80, rows: 24 }).asStream(),
    verbosity: 0,
    color: false,
  });
  bus.emit({ type: 'task_start', time: T0, play: 'p', task: 'warm', taskId: 'w', module: 'm' });
  await new Promise((res) => setTimeout(res, 50));
  await r.done();
});
beforeEach(() => setColumns(100));
afterEach(() => {
  vi.useRealTimers();
  if (realColumns) Object.defineProperty(process.stdout, 'columns', realColumns);
  else Reflect.deleteProperty(process.stdout, 'columns');
});

/** Lets the renderer's queued work and one frame run under fake timers. */
async function frame(): Promise<void> {
  for (let i = 0; i < 5; i++) await vi.advanceTimersByTimeAsync(100);
}

const SPIN = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /;

describe('tty renderer', () => {
  it('ends with a clean tree of finished tasks, host lines and the recap', async () => {
    const bus = new EventBus();
    const out = new MemoryStream({ columns: 100, rows: 40 });
    let now = T0;
    const r = attach(bus, { stream: out.asStream(), verbosity: 0, color: false, now: () => now });
    for (const e of sampleRun()) {
      now = e.time;
      bus.emit(e);
    }
    await r.done();
    expect(screen(out.text)).toEqual([
      'PLAY [Deploy]',
      '✖ Power off  1.2s  (1 changed, 1 failed)',
      '    ✔ node1  changed 0.4s',
      '    ✖ node2  failed 1.2s: BMC answered 401 Unauthorized',
      '[WARNING]: [node1] BMC certificate not verified',
      '✔ Wait for agent  10.0s  (1 ok)',
      '    ✔ node1  ok 10.0s: agent up · 1 retry, last: connection refused',
      '✔ HANDLER Install  0.2s  (1 ok)',
      '    ✔ node1 (item={"n":1})  ok 0.2s',
      'PLAY RECAP',
      'node1 : ok=3    changed=1    unreachable=0    failed=0    skipped=1    rescued=0    ignored=0',
      'node2 : ok=0    changed=0    unreachable=0    failed=1    skipped=0    rescued=0    ignored=0',
      'Wall time: 12.0s',
    ]);
    // cursor hidden while live, shown again at the end; no colour when none was asked for
    expect(out.text.startsWith('\x1b[?25l')).toBe(true);
    expect(out.text.endsWith('\x1b[?25h')).toBe(true);
    expect(out.text).not.toMatch(/\x1b\[\d+m/);
  });

  it('marks a rescued failure as a failure when it happens, and the rescue that follows as cleanup', async () => {
    vi.useFakeTimers();
    const bus = new EventBus();
    const out = new MemoryStream({ columns: 100, rows: 40 });
    let now = T0;
    const r = attach(bus, { stream: out.asStream(), verbosity: 0, color: false, now: () => now });
    const events = rescuedRun();
    // live, right after node2's pull failed and before node1's result: node2's line is a failure
    const failedAt = events.findIndex((e) => e.type === 'host_result' && e.status === 'rescued');
    for (const e of events.slice(0, failedAt + 1)) {
      now = e.time;
      bus.emit(e);
    }
    await frame();
    expect(screen(out.text)).toContain('    ✖ node2  failed (rescued) 0.1s: podman pull failed (rc 125): unexpected EOF');
    for (const e of events.slice(failedAt + 1)) {
      now = e.time;
      bus.emit(e);
    }
    await r.done();
    expect(screen(out.text)).toEqual([
      'PLAY [Deploy]',
      '✖ Pull the image  0.1s  (1 changed, 1 failed (rescued))',
      '    ✔ node1  changed 0.1s: pulled',
      '    ✖ node2  failed (rescued) 0.1s: podman pull failed (rc 125): unexpected EOF',
      '✔ CLEANUP Power off after the failure  0.1s  (1 changed)',
      '    ✔ node2  changed 0.1s: PowerState Off',
      '✖ CLEANUP Report the failure  0.1s  (1 failed)',
      '    ✖ node2  failed 0.1s: node powered off after "Pull the image" failed',
    ]);
  });

  it('shows running hosts live with elapsed time, retries and a progress line', async () => {
    vi.useFakeTimers();
    const bus = new EventBus();
    const out = new MemoryStream({ columns: 120, rows: 40 });
    let now = T0;
    attach(bus, { stream: out.asStream(), verbosity: 0, color: false, now: () => now });
    const events = sampleRun();
    const upTo = events.findIndex((e) => e.type === 'progress');
    for (const e of events.slice(0, upTo + 1)) {
      now = e.time;
      bus.emit(e);
    }
    now = T0 + 9300;
    await frame();
    const live = screen(out.text);
    expect(live.slice(-3).map((l) => l.replace(SPIN, ''))).toEqual([
      '❯ Wait for agent  8.0s',
      '    node1  8.0s  retrying 2/10: connection refused',
      '        › pulling image · 1.0 GiB/4.0 GiB 25% ETA 18.0s',
    ]);
    expect(live.at(-2)).toMatch(SPIN);
    // the first task is finished and permanent above the live part
    expect(live).toContain('✖ Power off  1.2s  (1 changed, 1 failed)');
    // elapsed time keeps ticking without new events
    now = T0 + 12_300;
    await frame();
    expect(screen(out.text).at(-2)).toMatch(/node1 {2}11\.0s {2}retrying 2\/10/);
  });

  it('never draws a line wider than the terminal and caps the live part to its height', async () => {
    vi.useFakeTimers();
    setColumns(40);
    const bus = new EventBus();
    const out = new MemoryStream({ columns: 40, rows: 8 });
    const now = T0 + 5000;
    attach(bus, { stream: out.asStream(), verbosity: 0, color: false, now: () => now });
    bus.emit({
      type: 'task_start',
      time: T0,
      play: 'p',
      task: 'A very long task name that goes on and on',
      taskId: 't',
      module: 'm',
    });
    for (let i = 0; i < 30; i++)
      bus.emit({ type: 'host_task_start', time: T0, host: `node${i}`, task: 'x', taskId: 't' });
    await frame();
    const lines = screen(out.text);
    for (const l of lines) expect([...l].length).toBeLessThan(40);
    expect(lines.length).toBeLessThanOrEqual(8);
    expect(lines[0]).toMatch(/A very long task/);
    expect(lines[lines.length - 1]).toMatch(/^ {4}… \d+ more hosts$/);
  });

  it('lists only the hosts that did not go well for big finished tasks, unless -v', async () => {
    const run = async (verbosity: 0 | 1) => {
      const bus = new EventBus();
      const out = new MemoryStream({ columns: 100, rows: 40 });
      const r = attach(bus, { stream: out.asStream(), verbosity, color: false, now: () => T0 });
      bus.emit({ type: 'task_start', time: T0, play: 'p', task: 'T', taskId: 't', module: 'm' });
      for (let i = 0; i < 12; i++) {
        bus.emit({ type: 'host_task_start', time: T0, host: `n${i}`, task: 'T', taskId: 't' });
        bus.emit({
          type: 'host_result',
          time: T0 + 10,
          host: `n${i}`,
          task: 'T',
          taskId: 't',
          status: i === 5 ? 'unreachable' : 'ok',
          changed: false,
          durationMs: 10,
        });
      }
      await r.done();
      return screen(out.text);
    };
    expect(await run(0)).toEqual(['✖ T  0.0s  (11 ok, 1 unreachable)', '    ✖ n5  unreachable 0.0s']);
    expect(await run(1)).toHaveLength(13);
  });

  it('marks a task whose hosts were all skipped as skipped', async () => {
    const bus = new EventBus();
    const out = new MemoryStream({ columns: 100, rows: 40 });
    const r = attach(bus, { stream: out.asStream(), verbosity: 0, color: false, now: () => T0 });
    bus.emit({ type: 'task_start', time: T0, play: 'p', task: 'S', taskId: 's', module: 'm' });
    bus.emit({
      type: 'host_result',
      time: T0,
      host: 'a',
      task: 'S',
      taskId: 's',
      status: 'skipped',
      changed: false,
      durationMs: 0,
    });
    await r.done();
    expect(screen(out.text)).toEqual(['↓ S  0.0s  (1 skipped)']);
  });

  it('shows -v arguments and results under their host, and -vv log lines', async () => {
    const bus = new EventBus();
    const out = new MemoryStream({ columns: 100, rows: 40 });
    let now = T0;
    const r = attach(bus, { stream: out.asStream(), verbosity: 2, color: false, now: () => now });
    for (const e of sampleRun()) {
      now = e.time;
      bus.emit(e);
    }
    await r.done();
    const lines = screen(out.text);
    expect(lines).toContain('  [node1] POST /redfish/v1/Systems/1/Actions/ComputerSystem.Reset');
    expect(lines).not.toContain('  [node1] line one');
    expect(lines).toContain('        · args: {"state":"off"}');
    expect(lines).toContain('        · result: {"uuid":"abc"}');
  });

  it('keeps long failure messages whole (wrapped, never cut)', async () => {
    setColumns(60);
    const bus = new EventBus();
    const out = new MemoryStream({ columns: 60, rows: 40 });
    const r = attach(bus, { stream: out.asStream(), verbosity: 0, color: false, now: () => T0 });
    // longer than any cut there ever was (400): the advice at the end must still show
    const msg = `${'x'.repeat(70)} ${Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ')} END fix image_source`;
    const words = `${Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ')} ${'y'.repeat(150)}`;
    bus.emit({ type: 'warning', time: T0, message: words });
    bus.emit({ type: 'task_start', time: T0, play: 'p', task: 'T', taskId: 't', module: 'm' });
    bus.emit({
      type: 'host_result',
      time: T0,
      host: 'a',
      task: 'T',
      taskId: 't',
      status: 'failed',
      changed: false,
      msg,
      durationMs: 0,
    });
    await r.done();
    const lines = screen(out.text);
    // narrower than the terminal: a line of exactly its width wraps early on some terminals
    for (const l of lines) expect([...l].length).toBeLessThan(60);
    const squashed = lines.join('').replace(/\s+/g, '');
    expect(squashed).toContain(msg.replace(/\s+/g, ''));
    expect(squashed).toContain(words.replace(/\s+/g, ''));
    expect(lines.filter((l) => l.trim() === '')).toEqual([]);
  });
});

describe('tty renderer with the free strategy', () => {
  it('re-opens a settled task when a slow host reports for it later, losing nothing', async () => {
    const bus = new EventBus();
    const out = new MemoryStream({ columns: 100, rows: 40 });
    const r = attach(bus, { stream: out.asStream(), verbosity: 0, color: false, now: () => T0 });
    const res = (host: string, taskId: string, task: string, time: number) =>
      bus.emit({
        type: 'host_result',
        time,
        host,
        task,
        taskId,
        status: 'ok',
        changed: false,
        durationMs: 100,
      });
    bus.emit({ type: 'task_start', time: T0, play: 'p', task: 'A', taskId: 'a', module: 'm' });
    bus.emit({ type: 'host_task_start', time: T0, host: 'fast', task: 'A', taskId: 'a' });
    res('fast', 'a', 'A', T0 + 100);
    bus.emit({ type: 'task_start', time: T0 + 100, play: 'p', task: 'B', taskId: 'b', module: 'm' });
    bus.emit({ type: 'host_task_start', time: T0 + 100, host: 'fast', task: 'B', taskId: 'b' });
    bus.emit({ type: 'host_task_start', time: T0 + 150, host: 'slow', task: 'A', taskId: 'a' });
    res('fast', 'b', 'B', T0 + 200);
    res('slow', 'a', 'A', T0 + 250);
    await r.done();
    const text = screen(out.text).join('\n');
    expect(text).toContain('    ✔ fast  ok 0.1s');
    expect(text).toContain('    ✔ slow  ok 0.1s');
    expect(text.match(/^✔ A /gm)).toHaveLength(2);
    expect(text.match(/^✔ B /gm)).toHaveLength(1);
    // the second entry says it continues the first: its count is not the task's whole story
    expect(text).toMatch(/^✔ A {2}[\d.]+s {2}\(1 ok\)$/m);
    expect(text).toMatch(/^✔ A {2}[\d.]+s {2}\(1 ok; 1 more above\)$/m);
  });
});

describe('tty renderer with loops', () => {
  it('keeps a looping host running with an item count until the loop result, then shows that', async () => {
    vi.useFakeTimers();
    const bus = new EventBus();
    const out = new MemoryStream({ columns: 100, rows: 40 });
    let now = T0;
    const r = attach(bus, { stream: out.asStream(), verbosity: 0, color: false, now: () => now });
    bus.emit({ type: 'task_start', time: T0, play: 'p', task: 'Loop', taskId: 'l', module: 'command' });
    bus.emit({ type: 'host_task_start', time: T0, host: 'h', task: 'Loop', taskId: 'l' });
    for (const [i, status] of [
      [1, 'changed'],
      [2, 'failed'],
    ] as const) {
      bus.emit({
        type: 'host_result',
        time: T0 + i * 1000,
        host: 'h',
        task: 'Loop',
        taskId: 'l',
        status,
        changed: true,
        item: `disk${i}`,
        msg: `m${i}`,
        durationMs: 1000,
      });
    }
    now = T0 + 2500;
    await frame();
    expect(screen(out.text).at(-1)).toMatch(/^ {4}. h \(item=disk2\) {2}2\.5s {2}2 items done$/);
    now = T0 + 3000;
    bus.emit({
      type: 'host_result',
      time: now,
      host: 'h',
      task: 'Loop',
      taskId: 'l',
      status: 'ignored',
      changed: true,
      msg: 'One or more items failed',
      durationMs: 3000,
    });
    bus.emit({ type: 'recap', time: now, stats: {}, durationMs: 3000 });
    await r.done();
    expect(screen(out.text).slice(0, 2)).toEqual([
      '✔ Loop  3.0s  (1 ignored)',
      '    ✔ h  ignored 3.0s: One or more items failed',
    ]);
  });
});
