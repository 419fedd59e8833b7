import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { TsbmError, UnreachableError } from '../../src/errors.js';
import { defineModule } from '../../src/module-api/types.js';
import { fakeLab, ok } from '../helpers/fake-connection.js';
import { block, cmd, playbook, play, runModel, task, when } from '../helpers/executor-model.js';

const two = { hosts: { a: {}, b: {} } };

describe('executor: linear strategy and failure isolation', () => {
  it('runs each task on every host before the next task', async () => {
    const r = await runModel(playbook(play([cmd('echo one'), cmd('echo two')])), { inventory: two });
    const order = r.lab.calls.map((c) => `${c.host}:${c.argv.join(' ')}`);
    expect(order.slice(0, 2).sort()).toEqual(['a:echo one', 'b:echo one']);
    expect(order.slice(2).sort()).toEqual(['a:echo two', 'b:echo two']);
    expect(r.code).toBe(0);
  });

  it('a failed host leaves the play, the other completes; exit 2', async () => {
    const lab = fakeLab({ respond: (c) => (c.host === 'a' && c.argv[0] === 'false' ? { rc: 1, stdout: '', stderr: 'no' } : ok()) });
    const r = await runModel(playbook(play([cmd('false'), cmd('echo after')])), { inventory: two, lab });
    expect(r.code).toBe(2);
    expect(r.lab.argvs('a')).toEqual(['false']);
    expect(r.lab.argvs('b')).toEqual(['false', 'echo after']);
    const fail = r.resultOf('a', 'false')!;
    expect(fail.status).toBe('failed');
    expect(fail).toMatchObject({ host: 'a', task: 'false', msg: 'non-zero return code 1' });
    expect(r.recap().a).toMatchObject({ failed: 1, ok: 0 });
    expect(r.recap().b).toMatchObject({ failed: 0, ok: 2, changed: 2 });
  });

  it('an unreachable host is reported unreachable (exit 4) and the other goes on', async () => {
    const lab = fakeLab({ unreachable: ['a'] });
    const r = await runModel(playbook(play([cmd('echo 1'), cmd('echo 2')])), { inventory: two, lab });
    expect(r.code).toBe(4);
    expect(r.resultOf('a', 'echo 1')!.status).toBe('unreachable');
    expect(r.resultOf('a', 'echo 2')).toBeUndefined();
    expect(r.lab.argvs('b')).toEqual(['echo 1', 'echo 2']);
    expect(r.recap().a!.unreachable).toBe(1);
  });

  it('ignore_unreachable lets the host go on', async () => {
    const lab = fakeLab({ unreachable: ['a'] });
    const r = await runModel(
      playbook(play([cmd('echo 1', { ignoreUnreachable: true }), task('debug', { msg: 'still here' }, { name: 'd' })])),
      { inventory: two, lab },
    );
    expect(r.resultOf('a', 'd')!.status).toBe('ok');
    expect(r.resultOf('a', 'echo 1')!.status).toBe('ignored');
    expect(r.recap().a).toMatchObject({ unreachable: 0, ignored: 1 });
    expect(r.code).toBe(0);
  });

  it('commands show as level-3 log events', async () => {
    const r = await runModel(playbook(play([cmd("echo 'a b'")])));
    expect(r.events).toContainEqual(expect.objectContaining({ type: 'log', level: 3, message: "exec: echo 'a b'" }));
  });

  it('free strategy lets a fast host finish before a slow one', async () => {
    const lab = fakeLab({
      respond: async (c) => {
        if (c.host === 'a') await new Promise((res) => setTimeout(res, 50));
        return ok();
      },
    });
    const r = await runModel(playbook(play([cmd('echo 1'), cmd('echo 2')], { strategy: 'free' })), { inventory: two, lab });
    const order = r.lab.calls.map((c) => `${c.host}:${c.argv.join(' ')}`);
    expect(order.indexOf('b:echo 2')).toBeLessThan(order.indexOf('a:echo 2'));
    expect(order).toContain('a:echo 2');
  });

  it('forks bounds concurrent hosts', async () => {
    let active = 0;
    let peak = 0;
    const lab = fakeLab({
      respond: async () => {
        active++;
        peak = Math.max(peak, active);
        await new Promise((res) => setTimeout(res, 10));
        active--;
        return ok();
      },
    });
    const hosts = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`h${i}`, {}]));
    await runModel(playbook(play([cmd('echo x')])), { inventory: { hosts }, lab, options: { forks: 3 } });
    expect(peak).toBe(3);
  });
});

describe('executor: dropped connections', () => {
  const mod = (idempotent: boolean) =>
    defineModule({
      name: 'again',
      summary: 'test',
      runsOn: 'target',
      args: Type.Object({}),
      checkMode: true,
      idempotent,
      example: '',
      async run(ctx) {
        const r = await ctx.exec(['work']);
        return { changed: false, stdout: r.stdout };
      },
    });
  const dropOnce = () => {
    let dropped = false;
    return fakeLab({
      respond: (c) => {
        if (c.argv[0] === 'work' && !dropped) {
          dropped = true;
          throw new UnreachableError(c.host, `connection to ${c.host} was lost while running: work`);
        }
        return ok('done');
      },
    });
  };
  it('an idempotent module runs again once after its established connection dropped', async () => {
    const r = await runModel(playbook(play([cmd('echo warm'), task('again', {}, { name: 'w' })])), { modules: [mod(true)], lab: dropOnce() });
    expect(r.resultOf('node1', 'w')!.status).toBe('ok');
    expect(r.lab.argvs('node1')).toEqual(['echo warm', 'work', 'work']);
    expect(r.events.some((e) => e.type === 'warning' && e.message.includes('safe to repeat'))).toBe(true);
  });
  it('a non-idempotent one makes the host unreachable', async () => {
    const r = await runModel(playbook(play([cmd('echo warm'), task('again', {}, { name: 'w' })])), { modules: [mod(false)], lab: dropOnce() });
    expect(r.resultOf('node1', 'w')!.status).toBe('unreachable');
    expect(r.code).toBe(4);
  });
});

describe('executor: task keywords', () => {
  it('when: false skips; when true runs; block when applies to its tasks', async () => {
    const r = await runModel(
      playbook(
        play([
          cmd('echo no', { when: when('eq x 2') }),
          cmd('echo yes', { when: when('eq x 1') }),
          block({ block: [cmd('echo in-block')] }, { when: when('not x') }),
        ], { vars: { x: 1 } }),
      ),
    );
    expect(r.results()).toEqual(['node1 echo no skipped', 'node1 echo yes changed', 'node1 echo in-block skipped']);
    expect(r.lab.argvs('node1')).toEqual(['echo yes']);
  });

  it('a skip names the condition that was false (the block\'s, or one of several)', async () => {
    const r = await runModel(
      playbook(
        play([
          cmd('echo a', { when: when('eq x 1', 'eq  x\n 2') }),
          block({ block: [cmd('echo b', { when: when('x') })] }, { when: when('not x') }),
          cmd('echo {{ item }}', { name: 'loop', loop: [1, 2], when: when('eq item 2') }),
        ], { vars: { x: 1 } }),
      ),
    );
    expect(r.resultOf('node1', 'echo a')).toMatchObject({
      status: 'skipped',
      msg: 'Conditional result was False: when: eq x 2',
      result: { false_condition: 'eq x 2' },
    });
    expect(r.resultOf('node1', 'echo b')?.msg).toBe('Conditional result was False: when: not x');
    const items = r.events.filter((e) => e.type === 'host_result' && e.task === 'loop' && e.item !== undefined);
    expect(items.map((e) => (e as { msg?: string }).msg)).toEqual(['Conditional result was False: when: eq item 2', undefined]);
  });

  it('loop with loop_control loop_var, index_var, label and register results', async () => {
    const r = await runModel(
      playbook(
        play([
          cmd('echo {{ disk }}-{{ idx }}', {
            name: 'each',
            loop: ['sda', 'sdb'],
            loopControl: { loopVar: 'disk', indexVar: 'idx', label: 'L{{ disk }}' },
            register: 'out',
          }),
          task('debug', { msg: '{{ len out.results }} {{ out.results.1.disk }} {{ out.results.1.stdout }} {{ out.changed }}' }, { name: 'show' }),
        ]),
      ),
      { lab: fakeLab({ respond: (c) => ok(c.argv.join(' ')) }) },
    );
    expect(r.lab.argvs('node1')).toEqual(['echo sda-0', 'echo sdb-1']);
    const items = r.events.filter((e) => e.type === 'host_result' && e.item !== undefined).map((e) => (e as { item: unknown }).item);
    expect(items).toEqual(['Lsda', 'Lsdb']);
    expect(r.resultOf('node1', 'show')!.result!.msg).toBe('2 sdb echo sdb-1 true');
  });

  it('loop over a templated list, when per item', async () => {
    const r = await runModel(
      playbook(play([cmd('echo {{ item }}', { loop: '{{ things }}', when: when('ne item 2') })], { vars: { things: [1, 2, 3] } })),
    );
    expect(r.lab.argvs('node1')).toEqual(['echo 1', 'echo 3']);
  });

  it('until succeeds on the third try and emits retry events', async () => {
    let n = 0;
    const lab = fakeLab({ respond: () => ok(String(++n)) });
    const r = await runModel(
      playbook(play([cmd('probe', { register: 'p', until: { expr: 'eq p.stdout "3"', pos: { file: 'x', line: 1, col: 1 } }, retries: 5 })])),
      { lab },
    );
    expect(n).toBe(3);
    expect(r.events.filter((e) => e.type === 'retry').map((e) => (e as { attempt: number }).attempt)).toEqual([1, 2]);
    const res = r.resultOf('node1', 'probe')!;
    expect(res.status).toBe('changed');
    expect(res.result!.attempts).toBe(3);
  });

  it('until gives up after retries + 1 attempts (default retries 3)', async () => {
    let n = 0;
    const lab = fakeLab({ respond: () => ok(String(++n)) });
    const r = await runModel(
      playbook(play([cmd('probe', { register: 'p', until: { expr: 'eq p.stdout "never"', pos: { file: 'x', line: 1, col: 1 } } })])),
      { lab },
    );
    expect(n).toBe(4);
    expect(r.resultOf('node1', 'probe')!.status).toBe('failed');
    expect(r.code).toBe(2);
  });

  it('failed_when and changed_when see the registered result', async () => {
    const lab = fakeLab({ respond: (c) => (c.argv[1] === 'bad' ? ok('ERROR here') : ok('fine')) });
    const r = await runModel(
      playbook(
        play([
          cmd('echo good', { register: 'r', changedWhen: when('false'), failedWhen: when('contains r.stdout "ERROR"') }),
          cmd('echo bad', { register: 'r', failedWhen: when('contains r.stdout "ERROR"') }),
        ]),
      ),
      { lab },
    );
    expect(r.results()).toEqual(['node1 echo good ok', 'node1 echo bad failed']);
  });

  it('ignore_errors counts the failure as ignored and goes on', async () => {
    const lab = fakeLab({ respond: (c) => (c.argv[0] === 'false' ? { rc: 1, stdout: '', stderr: '' } : ok()) });
    const r = await runModel(playbook(play([cmd('false', { ignoreErrors: true }), cmd('echo next')])), { lab });
    expect(r.results()).toEqual(['node1 false ignored', 'node1 echo next changed']);
    expect(r.recap().node1).toMatchObject({ ignored: 1, failed: 0 });
    expect(r.code).toBe(0);
  });

  it('a thrown module error becomes a failed result whose message is only what happened', async () => {
    const lab = fakeLab({ respond: () => Promise.reject(new Error('boom')) });
    const r = await runModel(playbook(play([cmd('echo x', { name: 'explode' })])), { lab });
    const res = r.resultOf('node1', 'explode')!;
    expect(res.status).toBe('failed');
    // host and task are the event's own fields (and lead the printed line): not repeated
    expect(res).toMatchObject({ host: 'node1', task: 'explode', msg: 'boom' });
  });

  it('names the host once: a message starting with the host name loses it, the advice stays whole', async () => {
    const advice = 'fix image_source or image_os_hash_value';
    const long = `${'checksum sha256 of the image does not match '.repeat(20)}`;
    const mod = defineModule({
      name: 'hosty',
      summary: 'fails naming its host',
      example: 'hosty: {}',
      runsOn: 'controller',
      args: Type.Object({}),
      checkMode: true,
      async run(ctx) {
        throw new TsbmError('runtime', `${ctx.host}: ${long}`, { host: ctx.host, hint: advice });
      },
    });
    const down = defineModule({
      name: 'down',
      summary: 'cannot reach its host',
      example: 'down: {}',
      runsOn: 'controller',
      args: Type.Object({}),
      checkMode: true,
      async run(ctx) {
        throw new UnreachableError(ctx.host, `${ctx.host}: 127.0.0.1:22 closed the connection during the SSH handshake`);
      },
    });
    const r = await runModel(playbook(play([task('hosty', {}, { name: 'Check' })])), { modules: [mod] });
    const res = r.resultOf('node1', 'Check')!;
    expect(res.msg).toBe(`${long}; ${advice}`);
    expect(res.msg).not.toContain('node1');
    const r2 = await runModel(playbook(play([task('down', {}, { name: 'Reach' })])), { modules: [down] });
    expect(r2.resultOf('node1', 'Reach')).toMatchObject({
      status: 'unreachable',
      msg: '127.0.0.1:22 closed the connection during the SSH handshake',
    });
  });

  it('check mode: after a module says the host is not booted, its SSH steps plan instead of connecting', async () => {
    const waits = defineModule({
      name: 'waits',
      summary: 'says the node would boot first',
      example: 'waits: {}',
      runsOn: 'controller',
      args: Type.Object({}),
      checkMode: true,
      async run(ctx) {
        return ctx.check ? { changed: false, msg: 'not up', tsbm_check_after_boot: 'the node is Off' } : { changed: false };
      },
    });
    const pb = () =>
      playbook(
        play([
          task('waits', {}, { name: 'Wait' }),
          cmd('echo {{ never_defined.device }}', { name: 'On the ramdisk', register: 'x' }),
          task('debug', { msg: 'still on the controller' }, { name: 'Controller' }),
          cmd('echo local', { name: 'Delegated', delegateTo: 'localhost' }),
        ]),
      );
    const lab = fakeLab();
    const r = await runModel(pb(), { modules: [waits], options: { check: true }, lab });
    expect(r.code).toBe(0);
    expect(r.resultOf('node1', 'On the ramdisk')).toMatchObject({ status: 'skipped', msg: 'would run after boot: command (the node is Off)' });
    expect(r.resultOf('node1', 'Controller')?.status).toBe('ok');
    expect(r.resultOf('node1', 'Delegated')?.status).toBe('skipped'); // command has no check mode; not planned
    expect(r.lab.opened.filter((c) => c.host === 'node1')).toEqual([]);
    // a real run ignores the note
    const real = await runModel(pb(), { modules: [waits] });
    expect(real.resultOf('node1', 'On the ramdisk')?.status).toBe('failed'); // undefined variable: it ran
  });

  it('module args are validated after rendering, with the task position', async () => {
    const r = await runModel(playbook(play([task('pause', { seconds: '{{ s }}' }, { name: 'p', vars: { s: 'soon' } })])));
    const res = r.resultOf('node1', 'p')!;
    expect(res.status).toBe('failed');
    expect(res.msg).toMatch(/seconds must be number.*site\.yml:\d+:3/);
  });

  it('an undefined variable in args fails the task with the variable named', async () => {
    const r = await runModel(playbook(play([task('debug', { msg: '{{ nope }}' }, { name: 'd' })])));
    expect(r.resultOf('node1', 'd')!.msg).toContain('nope');
  });

  it('environment and become reach the connection', async () => {
    const r = await runModel(
      playbook(
        play([block({ block: [cmd('env', { environment: { B: '{{ b }}' }, become: true, becomeUser: 'ops' })] }, { environment: { A: '1' } })], {
          vars: { b: 2 },
          environment: { Z: 'z' },
        }),
      ),
    );
    const call = r.lab.calls[0]!;
    expect(call.opts?.env).toEqual({ Z: 'z', A: '1', B: '2' });
    expect(call.opts?.become).toEqual({ user: 'ops' });
  });

  it('environment values carrying a secret travel as secretEnv, never as plain env', async () => {
    const r = await runModel(
      playbook(play([cmd('env', { environment: { PW: 'x{{ bmc_password }}', PLAIN: 'p' } })], { vars: { bmc_password: 'pa55word' } })),
    );
    const call = r.lab.calls[0]!;
    expect(call.opts?.env).toEqual({ PLAIN: 'p' });
    expect(call.opts?.secretEnv).toEqual({ PW: 'xpa55word' });
  });

  it('register of a skipped task holds skipped: true', async () => {
    const r = await runModel(
      playbook(play([cmd('x', { when: when('false'), register: 's' }), task('debug', { msg: '{{ s.skipped }}' }, { name: 'd' })])),
    );
    expect(r.resultOf('node1', 'd')!.result!.msg).toBe(true);
  });
});
