import { describe, expect, it } from 'vitest';
import type { Connection, ExecOptions } from '../../src/connection/types.js';
import { ConnectionPool } from '../../src/executor/connection-pool.js';
import { type ContextInit, createModuleContext } from '../../src/executor/module-context.js';
import { EventBus } from '../../src/output/events.js';
import { Redactor } from '../../src/output/redact.js';

function contextRecordingSignals(task: AbortSignal): { seen: (AbortSignal | undefined)[]; init: ContextInit } {
  const seen: (AbortSignal | undefined)[] = [];
  const conn = {
    exec: async (_argv: readonly string[], opts?: ExecOptions) => {
      seen.push(opts?.signal);
      return { rc: 0, stdout: '', stderr: '' };
    },
  } as unknown as Connection;
  const pool = new ConnectionPool(async () => conn);
  const init = {
    host: 'node1',
    task: 't',
    taskId: 'p.yml:1:1',
    vars: {},
    check: false,
    diff: false,
    signal: task,
    services: {},
    pool,
    fresh: async () => conn,
    bus: new EventBus(),
    redactor: new Redactor(),
    target: { connection: 'ssh', host: 'node1' },
    hostSpec: () => ({ connection: 'ssh', host: 'node1' }),
    execDefaults: {},
    startedAt: 0,
    noLog: false,
  } as unknown as ContextInit;
  return { seen, init };
}

describe('module context signals', () => {
  it("passes the task's own signal through unchanged when a module hands it back", async () => {
    const task = new AbortController();
    const { seen, init } = contextRecordingSignals(task.signal);
    const ctx = createModuleContext(init);
    await ctx.exec(['true'], { signal: ctx.signal });
    await ctx.exec(['true']);
    expect(seen).toEqual([task.signal, task.signal]);
  });

  it("joins a module's own signal with the task's: either one aborts the command", async () => {
    for (const which of ['own', 'task'] as const) {
      const task = new AbortController();
      const own = new AbortController();
      const { seen, init } = contextRecordingSignals(task.signal);
      await createModuleContext(init).exec(['true'], { signal: own.signal });
      const joined = seen[0];
      expect(joined).not.toBe(task.signal);
      expect(joined?.aborted).toBe(false);
      (which === 'own' ? own : task).abort(new Error(which));
      expect(joined?.aborted).toBe(true);
    }
  });
});

describe('module context command log', () => {
  it('an empty batch runs nothing and logs no empty `exec:` line', async () => {
    const { init } = contextRecordingSignals(new AbortController().signal);
    let shells = 0;
    const execShell = async () => {
      shells += 1;
      return { rc: 0, stdout: '', stderr: '' };
    };
    const pool = new ConnectionPool(async () => ({ execShell }) as unknown as Connection);
    const bus = new EventBus();
    const logged: string[] = [];
    bus.on((e) => {
      if (e.type === 'log') logged.push(e.message);
    });
    const ctx = createModuleContext({ ...init, pool, bus, verbosity: 3 } as unknown as ContextInit);
    expect(await ctx.execSteps([])).toEqual([]);
    expect(shells).toBe(0);
    expect(logged.filter((m) => m.startsWith('exec:'))).toEqual([]);
  });
});
