// The live renderer in a real terminal (tmux): what an operator actually sees, mid-run and at the end.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'tsbm-tmux-'));
const socket = `tsbm-tty-${process.pid}`;
const hasTmux = spawnSync('tmux', ['-V']).status === 0;

const tmux = (...args: string[]) => spawnSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitForScreen(pred: (s: string) => boolean, timeoutMs = 15_000): Promise<string> {
  const end = Date.now() + timeoutMs;
  let screen = '';
  while (Date.now() < end) {
    screen = tmux('capture-pane', '-p', '-t', 'demo').stdout;
    if (pred(screen)) return screen;
    await sleep(100);
  }
  return screen;
}

// Drives the built renderer with a scripted run: two hosts, a retrying wait with progress.
const demo = `
import { EventBus } from '${root}/dist/output/events.js';
import { attach } from '${root}/dist/output/renderers/tty.js';
const bus = new EventBus();
const r = attach(bus, { stream: process.stdout, verbosity: 0, color: true });
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
const t = () => Date.now();
const start = t();
bus.emit({ type: 'run_start', time: t(), runId: 'r', playbook: 'deploy.yml', version: '0', options: {} });
bus.emit({ type: 'play_start', time: t(), play: 'Deploy', hosts: ['node1', 'node2'] });
bus.emit({ type: 'task_start', time: t(), play: 'Deploy', task: 'Power off', taskId: 't1', module: 'm' });
for (const h of ['node1', 'node2']) bus.emit({ type: 'host_task_start', time: t(), host: h, task: 'Power off', taskId: 't1' });
await sleep(300);
bus.emit({ type: 'host_result', time: t(), host: 'node1', task: 'Power off', taskId: 't1', status: 'changed', changed: true, durationMs: 300 });
bus.emit({ type: 'host_result', time: t(), host: 'node2', task: 'Power off', taskId: 't1', status: 'failed', changed: false, msg: 'BMC said 401', durationMs: 300 });
bus.emit({ type: 'task_start', time: t(), play: 'Deploy', task: 'Wait for agent', taskId: 't2', module: 'm' });
bus.emit({ type: 'host_task_start', time: t(), host: 'node1', task: 'Wait for agent', taskId: 't2' });
bus.emit({ type: 'retry', time: t(), host: 'node1', task: 'Wait for agent', taskId: 't2', attempt: 2, retries: 10 });
bus.emit({ type: 'progress', time: t(), host: 'node1', task: 'Wait for agent', taskId: 't2', message: 'pulling', current: 1073741824, total: 4294967296, unit: 'bytes', elapsedMs: 1000 });
process.stderr.write('');
await sleep(2500);
bus.emit({ type: 'host_result', time: t(), host: 'node1', task: 'Wait for agent', taskId: 't2', status: 'ok', changed: false, durationMs: 2500 });
bus.emit({ type: 'recap', time: t(), durationMs: t() - start, stats: {
  node1: { ok: 1, changed: 1, unreachable: 0, failed: 0, skipped: 0, rescued: 0, ignored: 0 },
  node2: { ok: 0, changed: 0, unreachable: 0, failed: 1, skipped: 0, rescued: 0, ignored: 0 } } });
bus.emit({ type: 'run_end', time: t(), exitCode: 2, durationMs: t() - start });
await r.done();
console.log('DEMO-END');
`;

// A process that dies mid-run (a second Ctrl-C exits at once) while a line is live.
const hardExit = `
import { EventBus } from '${root}/dist/output/events.js';
import { attach } from '${root}/dist/output/renderers/tty.js';
const bus = new EventBus();
attach(bus, { stream: process.stdout, verbosity: 0, color: true });
bus.emit({ type: 'task_start', time: Date.now(), play: 'p', task: 'Wait', taskId: 't1', module: 'm' });
bus.emit({ type: 'host_task_start', time: Date.now(), host: 'n1', task: 'Wait', taskId: 't1' });
setTimeout(() => { process.stderr.write('HELD-STDERR\\n'); process.exit(130); }, 800);
`;

beforeAll(() => {
  if (!hasTmux) return;
  // npm test builds first; compiling here would swap dist/ under other test files.
  if (!existsSync(join(root, 'dist/output/renderers/tty.js'))) throw new Error('run `npm run build` first');
  writeFileSync(join(dir, 'demo.mjs'), demo);
  writeFileSync(join(dir, 'exit.mjs'), hardExit);
}, 180_000);

afterAll(() => {
  if (hasTmux) tmux('kill-server');
  rmSync(dir, { recursive: true, force: true });
});

describe('tty renderer in tmux', () => {
  it.skipIf(!hasTmux)(
    'draws a live tree with retries and progress, then leaves a clean summary',
    async () => {
      const r = tmux(
        'new-session',
        '-d',
        '-s',
        'demo',
        '-x',
        '100',
        '-y',
        '30',
        `${process.execPath} ${join(dir, 'demo.mjs')}; sleep 60`,
      );
      expect(r.status).toBe(0);
      const live = await waitForScreen((s) => s.includes('retrying 2/10') && s.includes('› pulling'));
      expect(live).toContain('PLAY [Deploy]');
      expect(live).toMatch(/✖ Power off {2}\d+\.\ds {2}\(1 changed, 1 failed\)/);
      // listr2 marks a task with host lines by a pointer and spins on each running host
      expect(live).toMatch(/❯ Wait for agent {2}\d+\.\ds/);
      expect(live).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] node1 {2}\d+\.\ds {2}retrying 2\/10/);
      expect(live).toMatch(/\n {8}› pulling · 1\.0 GiB\/4\.0 GiB 25% ETA \d+\.\ds/);

      const end = await waitForScreen((s) => s.includes('DEMO-END'));
      const lines = end
        .split('\n')
        .map((l) => l.trimEnd())
        .filter(Boolean);
      expect(lines).toEqual([
        'PLAY [Deploy]',
        expect.stringMatching(/^✖ Power off {2}0\.\ds {2}\(1 changed, 1 failed\)$/),
        expect.stringMatching(/^ {4}✔ node1 {2}changed 0\.\ds$/),
        expect.stringMatching(/^ {4}✖ node2 {2}failed 0\.\ds: BMC said 401$/),
        expect.stringMatching(/^✔ Wait for agent {2}2\.\ds {2}\(1 ok\)$/),
        expect.stringMatching(/^ {4}✔ node1 {2}ok 2\.\ds · 1 retry$/),
        'PLAY RECAP',
        'node1 : ok=1    changed=1    unreachable=0    failed=0    skipped=0    rescued=0    ignored=0',
        'node2 : ok=0    changed=0    unreachable=0    failed=1    skipped=0    rescued=0    ignored=0',
        expect.stringMatching(/^Wall time: \d+\.\ds$/),
        'DEMO-END',
      ]);
      // no spinner frame or half-erased line left behind
      expect(end).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
    },
  );

  it.skipIf(!hasTmux)('a hard exit mid-run gives the cursor back and loses no stderr line', async () => {
    const r = tmux(
      'new-session',
      '-d',
      '-s',
      'exit',
      '-x',
      '80',
      '-y',
      '20',
      `${process.execPath} ${join(dir, 'exit.mjs')}; echo EXIT=$?; sleep 60`,
    );
    expect(r.status).toBe(0);
    let screen = '';
    const end = Date.now() + 15_000;
    while (Date.now() < end && !screen.includes('EXIT=')) {
      await sleep(100);
      screen = tmux('capture-pane', '-p', '-t', 'exit').stdout;
    }
    expect(screen).toContain('HELD-STDERR');
    expect(screen).toContain('EXIT=130');
    expect(tmux('display-message', '-p', '-t', 'exit', '#{cursor_flag}').stdout.trim()).toBe('1');
  });
});
