// A fixed, realistic event sequence shared by the renderer tests (times are fixed).
import type { TsbmEvent } from '../../src/output/events.js';

export const T0 = 1_700_000_000_000;

export function sampleRun(): TsbmEvent[] {
  return [
    { type: 'run_start', time: T0, runId: 'r1', playbook: 'deploy.yml', version: '0.1.0', options: {} },
    { type: 'play_start', time: T0 + 1, play: 'Deploy', hosts: ['node1', 'node2'] },
    { type: 'task_start', time: T0 + 2, play: 'Deploy', task: 'Power off', taskId: 't1', module: 'redfish_power' },
    { type: 'host_task_start', time: T0 + 2, host: 'node1', task: 'Power off', taskId: 't1', args: { state: 'off' } },
    { type: 'host_task_start', time: T0 + 2, host: 'node2', task: 'Power off', taskId: 't1', args: { state: 'off' } },
    { type: 'log', time: T0 + 3, host: 'node1', task: 'Power off', level: 2, message: 'POST /redfish/v1/Systems/1/Actions/ComputerSystem.Reset' },
    { type: 'log', time: T0 + 3, host: 'node1', task: 'Power off', level: 3, message: 'line one\nline two' },
    { type: 'host_result', time: T0 + 402, host: 'node1', task: 'Power off', taskId: 't1', status: 'changed', changed: true, durationMs: 400 },
    {
      type: 'host_result',
      time: T0 + 1202,
      host: 'node2',
      task: 'Power off',
      taskId: 't1',
      status: 'failed',
      changed: false,
      msg: 'BMC answered 401\nUnauthorized',
      durationMs: 1200,
    },
    { type: 'task_start', time: T0 + 1300, play: 'Deploy', task: 'Wait for agent', taskId: 't2', module: 'wait_agent' },
    { type: 'host_task_start', time: T0 + 1300, host: 'node1', task: 'Wait for agent', taskId: 't2' },
    { type: 'retry', time: T0 + 6300, host: 'node1', task: 'Wait for agent', taskId: 't2', attempt: 2, retries: 10, msg: 'connection refused' },
    {
      type: 'progress',
      time: T0 + 7300,
      host: 'node1',
      task: 'Wait for agent',
      taskId: 't2',
      message: 'pulling image',
      current: 1024 ** 3,
      total: 4 * 1024 ** 3,
      unit: 'bytes',
      elapsedMs: 6000,
    },
    { type: 'progress', time: T0 + 8300, host: 'node1', task: 'Wait for agent', taskId: 't2', message: 'pulling image', elapsedMs: 7000 },
    { type: 'warning', time: T0 + 9000, host: 'node1', message: 'BMC certificate not verified' },
    {
      type: 'host_result',
      time: T0 + 11300,
      host: 'node1',
      task: 'Wait for agent',
      taskId: 't2',
      status: 'ok',
      changed: false,
      msg: 'agent up',
      result: { uuid: 'abc' },
      durationMs: 10000,
    },
    { type: 'task_start', time: T0 + 11400, play: 'Deploy', task: 'Install', taskId: 't3', module: 'bootc_install', handler: true },
    { type: 'host_task_start', time: T0 + 11400, host: 'node1', task: 'Install', taskId: 't3' },
    { type: 'host_result', time: T0 + 11500, host: 'node1', task: 'Install', taskId: 't3', status: 'skipped', changed: false, item: 'a', durationMs: 50 },
    { type: 'host_result', time: T0 + 11600, host: 'node1', task: 'Install', taskId: 't3', status: 'ok', changed: false, item: { n: 1 }, durationMs: 50 },
    {
      type: 'recap',
      time: T0 + 12000,
      stats: {
        node1: { ok: 3, changed: 1, unreachable: 0, failed: 0, skipped: 1, rescued: 0, ignored: 0 },
        node2: { ok: 0, changed: 0, unreachable: 0, failed: 1, skipped: 0, rescued: 0, ignored: 0 },
      },
      durationMs: 12000,
    },
    { type: 'run_end', time: T0 + 12001, exitCode: 2, durationMs: 12001 },
  ];
}

/**
 * A deploy where node2's pull fails inside a block with a rescue: the pull's result is `rescued`,
 * then the rescue (cleanup) powers node2 off and fails it on purpose, as deploy-bootc.yml does.
 */
export function rescuedRun(): TsbmEvent[] {
  const hr = (time: number, host: string, task: string, taskId: string, status: 'ok' | 'changed' | 'rescued' | 'failed', msg?: string) =>
    ({ type: 'host_result', time, host, task, taskId, status, changed: status === 'changed', durationMs: 100, ...(msg ? { msg } : {}) }) as const;
  return [
    { type: 'play_start', time: T0, play: 'Deploy', hosts: ['node1', 'node2'] },
    { type: 'task_start', time: T0 + 1, play: 'Deploy', task: 'Pull the image', taskId: 'pull', module: 'podman_pull' },
    { type: 'host_task_start', time: T0 + 1, host: 'node1', task: 'Pull the image', taskId: 'pull' },
    { type: 'host_task_start', time: T0 + 1, host: 'node2', task: 'Pull the image', taskId: 'pull' },
    hr(T0 + 101, 'node2', 'Pull the image', 'pull', 'rescued', 'podman pull failed (rc 125): unexpected EOF'),
    hr(T0 + 101, 'node1', 'Pull the image', 'pull', 'changed', 'pulled'),
    { type: 'task_start', time: T0 + 102, play: 'Deploy', task: 'Power off after the failure', taskId: 'off', module: 'redfish_power', rescue: true },
    { type: 'host_task_start', time: T0 + 102, host: 'node2', task: 'Power off after the failure', taskId: 'off' },
    hr(T0 + 202, 'node2', 'Power off after the failure', 'off', 'changed', 'PowerState Off'),
    { type: 'task_start', time: T0 + 203, play: 'Deploy', task: 'Report the failure', taskId: 'report', module: 'fail', rescue: true },
    { type: 'host_task_start', time: T0 + 203, host: 'node2', task: 'Report the failure', taskId: 'report' },
    hr(T0 + 303, 'node2', 'Report the failure', 'report', 'failed', 'node powered off after "Pull the image" failed'),
    { type: 'run_end', time: T0 + 304, exitCode: 2, durationMs: 304 },
  ];
}

/** A writable that collects what renderers write (optionally pretending to be a terminal). */
export class MemoryStream {
  chunks: string[] = [];
  writable = true;
  columns: number | undefined;
  rows: number | undefined;
  isTTY: boolean;
  constructor(tty?: { columns: number; rows: number }) {
    this.isTTY = tty !== undefined;
    this.columns = tty?.columns;
    this.rows = tty?.rows;
  }
  write(chunk: string | Uint8Array, cb?: unknown): boolean {
    this.chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    if (typeof cb === 'function') cb();
    return true;
  }
  get text(): string {
    return this.chunks.join('');
  }
  asStream(): NodeJS.WritableStream {
    return this as unknown as NodeJS.WritableStream;
  }
}
