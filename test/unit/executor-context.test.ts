import { existsSync } from 'node:fs';
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { defineModule, type ModuleContext } from '../../src/module-api/types.js';
import { fakeLab } from '../helpers/fake-connection.js';
import { cmd, play, playbook, runModel, task } from '../helpers/executor-model.js';

const probe = (fn: (ctx: ModuleContext) => Promise<Record<string, unknown>>, runsOn: 'controller' | 'target' = 'target') =>
  defineModule({
    name: 'probe',
    summary: 'test',
    runsOn,
    args: Type.Object({}),
    checkMode: true,
    example: '',
    async run(ctx) {
      return { changed: false, ...(await fn(ctx)) };
    },
  });

describe('executor: module context', () => {
  it('services: one instance per key per run, cleanups and tmpDir removal at the end (also after failure)', async () => {
    const closed: string[] = [];
    let tmp = '';
    let created = 0;
    const m = probe(async (ctx) => {
      const svc = ctx.services.get('thing', () => {
        created++;
        ctx.services.onClose(() => {
          closed.push('thing');
        });
        return { id: created };
      });
      tmp = ctx.services.tmpDir;
      return { id: svc.id, dir: ctx.services.playbookDir };
    });
    const r = await runModel(playbook(play([task('probe', {}, { name: 'p' }), cmd('false')])), {
      modules: [m],
      inventory: { hosts: { a: {}, b: {} } },
      lab: fakeLab({ respond: () => ({ rc: 1, stdout: '', stderr: '' }) }),
    });
    expect(created).toBe(1);
    expect(closed).toEqual(['thing']);
    expect(r.resultOf('a', 'p')!.result).toMatchObject({ id: 1, dir: '/pb' });
    expect(tmp).not.toBe('');
    expect(existsSync(tmp)).toBe(false);
    expect(r.code).toBe(2);
  });

  it('controller modules and local() run on the local connection; target I/O goes to the host', async () => {
    const m = probe(async (ctx) => {
      await ctx.exec(['on-target']);
      await ctx.local(['on-controller']);
      await ctx.put('data', '/tmp/f', { mode: 0o600 });
      return { got: (await ctx.get('/tmp/f')).toString() };
    });
    const r = await runModel(playbook(play([task('probe', {}, { name: 'p' })])), { modules: [m] });
    expect(r.lab.calls.map((c) => `${c.host}:${c.argv[0]}`)).toEqual(['node1:on-target', 'localhost:on-controller']);
    expect(r.resultOf('node1', 'p')!.result!.got).toBe('data');
    const c = probe(async (ctx) => {
      await ctx.exec(['x']);
      return {};
    }, 'controller');
    const r2 = await runModel(playbook(play([task('probe', {}, { name: 'p' })])), { modules: [c] });
    expect(r2.lab.specs.map((s) => s.connection)).toEqual(['local']);
  });

  it('connect() opens a fresh connection to the host with the asked timeout', async () => {
    const m = probe(async (ctx) => {
      const conn = await ctx.connect({ timeoutMs: 1234 });
      await conn.exec(['hello']);
      await conn.close();
      return {};
    });
    const r = await runModel(playbook(play([task('probe', {}, { name: 'p' })])), { modules: [m] });
    expect(r.lab.specs).toHaveLength(1);
    expect(r.lab.specs[0]).toMatchObject({ host: 'node1', connectTimeoutMs: 1234 });
  });

  it('progress, log and warn become events; check and diff flags reach the module', async () => {
    const m = probe(async (ctx) => {
      ctx.progress({ message: 'half', current: 1, total: 2 });
      ctx.log('detail', 2);
      ctx.warn('careful');
      return { check: ctx.check, diff: ctx.diff };
    });
    const r = await runModel(playbook(play([task('probe', {}, { name: 'p' })])), { modules: [m], options: { check: true, diff: true } });
    expect(r.events).toContainEqual(expect.objectContaining({ type: 'progress', message: 'half', current: 1, total: 2, host: 'node1' }));
    expect(r.events).toContainEqual(expect.objectContaining({ type: 'log', message: 'detail', level: 2 }));
    expect(r.events).toContainEqual(expect.objectContaining({ type: 'warning', message: 'careful', host: 'node1' }));
    expect(r.resultOf('node1', 'p')!.result).toMatchObject({ check: true, diff: true });
  });

  it('ctx.secret registers a value for redaction; ctx.vars renders templates in vars', async () => {
    const m = probe(async (ctx) => {
      ctx.secret('generated-s3cret');
      return { v: ctx.vars.derived };
    });
    const r = await runModel(playbook(play([task('probe', {}, { name: 'p' })], { vars: { base: 'x', derived: '{{ base }}-y' } })), {
      modules: [m],
    });
    expect(r.redactor.redact('generated-s3cret')).toBe('********');
    expect(r.resultOf('node1', 'p')!.result!.v).toBe('x-y');
  });

  it('loop_control pause waits between items', async () => {
    const r = await runModel(playbook(play([cmd('echo {{ item }}', { loop: [1, 2, 3], loopControl: { loopVar: 'item', pause: 0.05 } })])));
    const at = r.lab.calls.map((c) => c.at);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(45);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(45);
  });
});
