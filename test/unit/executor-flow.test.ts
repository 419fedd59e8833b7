import { describe, expect, it } from 'vitest';
import { defineModule } from '../../src/module-api/types.js';
import { Type } from '@sinclair/typebox';
import { fakeLab, ok } from '../helpers/fake-connection.js';
import { block, cmd, handler, include, play, playbook, runModel, task, when } from '../helpers/executor-model.js';

const failOn = (word: string) => fakeLab({ respond: (c) => (c.argv.includes(word) ? { rc: 1, stdout: '', stderr: '' } : ok()) });

describe('executor: block / rescue / always', () => {
  it('runs block, rescue, always in order and exposes tsbm_failed_task / tsbm_failed_result', async () => {
    const r = await runModel(
      playbook(
        play([
          block({
            block: [cmd('echo 1'), cmd('echo FAIL', { name: 'breaks' }), cmd('echo not-run')],
            rescue: [task('debug', { msg: '{{ tsbm_failed_task.name }}/{{ tsbm_failed_result.rc }}' }, { name: 'rescue' })],
            always: [cmd('echo always')],
          }),
          cmd('echo after'),
        ]),
      ),
      { lab: failOn('FAIL') },
    );
    expect(r.lab.argvs('node1')).toEqual(['echo 1', 'echo FAIL', 'echo always', 'echo after']);
    expect(r.resultOf('node1', 'rescue')!.result!.msg).toBe('breaks/1');
    expect(r.recap().node1).toMatchObject({ failed: 0, rescued: 1 });
    expect(r.code).toBe(0);
  });

  it('always runs after an unrescued failure, and the host still fails', async () => {
    const r = await runModel(
      playbook(play([block({ block: [cmd('echo FAIL')], always: [cmd('echo cleanup')] }), cmd('echo after')])),
      { lab: failOn('FAIL') },
    );
    expect(r.lab.argvs('node1')).toEqual(['echo FAIL', 'echo cleanup']);
    expect(r.code).toBe(2);
    expect(r.recap().node1!.failed).toBe(1);
  });

  it('task_start marks the tasks of a rescue section (at any depth), so outputs show them as cleanup', async () => {
    const r = await runModel(
      playbook(
        play([
          block({
            block: [cmd('echo FAIL', { name: 'breaks' })],
            // a role imported into the rescue is a block inside it: its tasks are cleanup too
            rescue: [cmd('echo r1', { name: 'cleanup 1' }), block({ block: [cmd('echo r2', { name: 'cleanup 2' })] })],
            always: [cmd('echo always', { name: 'always' })],
          }),
          cmd('echo after', { name: 'after' }),
        ]),
      ),
      { lab: failOn('FAIL') },
    );
    const starts = r.events.filter((e) => e.type === 'task_start').map((e) => [e.task, e.rescue === true]);
    expect(starts).toEqual([
      ['breaks', false],
      ['cleanup 1', true],
      ['cleanup 2', true],
      ['always', false],
      ['after', false],
    ]);
  });

  it('a failing rescue fails the host', async () => {
    const r = await runModel(playbook(play([block({ block: [cmd('echo FAIL')], rescue: [cmd('echo FAIL again')] })])), {
      lab: failOn('FAIL'),
    });
    expect(r.code).toBe(2);
  });

  it('linear: the failing host rescues while the other goes on through the block', async () => {
    const lab = fakeLab({ respond: (c) => (c.host === 'a' && c.argv[1] === '1' ? { rc: 1, stdout: '', stderr: '' } : ok()) });
    const r = await runModel(
      playbook(play([block({ block: [cmd('echo 1'), cmd('echo 2')], rescue: [cmd('echo r')] }), cmd('echo 3')])),
      { inventory: { hosts: { a: {}, b: {} } }, lab },
    );
    expect(r.lab.argvs('a')).toEqual(['echo 1', 'echo r', 'echo 3']);
    expect(r.lab.argvs('b')).toEqual(['echo 1', 'echo 2', 'echo 3']);
  });
});

describe('executor: handlers', () => {
  const restart = handler('restart', cmd('echo restart'), ['web changed']);
  it('run once at the end of the play, only for hosts that notified, only on change', async () => {
    const r = await runModel(
      playbook(
        play(
          [
            cmd('echo c1', { notify: ['restart'] }),
            cmd('echo c2', { notify: ['web changed'] }),
            cmd('echo unchanged', { notify: ['restart'], changedWhen: when('false') }),
            cmd('echo last'),
          ],
          { handlers: [restart] },
        ),
      ),
    );
    expect(r.lab.argvs('node1')).toEqual(['echo c1', 'echo c2', 'echo unchanged', 'echo last', 'echo restart']);
    expect(r.events.find((e) => e.type === 'task_start' && e.handler)).toBeTruthy();
  });

  it('meta: flush_handlers runs them at that point', async () => {
    const r = await runModel(
      playbook(play([cmd('echo c1', { notify: ['restart'] }), task('meta', { action: 'flush_handlers' }), cmd('echo after')], { handlers: [restart] })),
    );
    expect(r.lab.argvs('node1')).toEqual(['echo c1', 'echo restart', 'echo after']);
  });

  it('a handler failing at a flush takes the host out of the play', async () => {
    const bad = handler('bad', cmd('echo FAIL'));
    const r = await runModel(
      playbook(play([cmd('echo c1', { notify: ['bad'] }), task('meta', { action: 'flush_handlers' }), cmd('echo after')], { handlers: [bad] })),
      { lab: failOn('FAIL') },
    );
    expect(r.lab.argvs('node1')).toEqual(['echo c1', 'echo FAIL']);
    expect(r.code).toBe(2);
  });

  it('a host that failed does not run its handlers', async () => {
    const r = await runModel(
      playbook(play([cmd('echo c1', { notify: ['restart'] }), cmd('echo FAIL')], { handlers: [restart] })),
      { lab: failOn('FAIL') },
    );
    expect(r.lab.argvs('node1')).not.toContain('echo restart');
  });
});

describe('executor: serial, max_fail_percentage, any_errors_fatal', () => {
  const four = { hosts: { h1: {}, h2: {}, h3: {}, h4: {} } };
  it('serial: 2 runs two batches, each through the whole play', async () => {
    const r = await runModel(playbook(play([cmd('echo a'), cmd('echo b')], { serial: [2] })), { inventory: four });
    const order = r.lab.calls.map((c) => `${c.host}:${c.argv[1]}`);
    expect(order.slice(0, 4).every((x) => x.startsWith('h1') || x.startsWith('h2'))).toBe(true);
    expect(order.slice(4).every((x) => x.startsWith('h3') || x.startsWith('h4'))).toBe(true);
    expect(r.events.filter((e) => e.type === 'host_result')).toHaveLength(8);
  });

  it('serial lists and percentages', async () => {
    const r = await runModel(playbook(play([cmd('echo a')], { serial: [1, '50%'] })), { inventory: four });
    // batches h1 | h2,h3 | h4: all hosts ran
    expect(new Set(r.lab.calls.map((c) => c.host)).size).toBe(4);
  });

  it('a batch that fails entirely stops the play', async () => {
    const lab = fakeLab({ respond: (c) => (c.host === 'h1' ? { rc: 1, stdout: '', stderr: '' } : ok()) });
    const r = await runModel(playbook(play([cmd('echo a')], { serial: [1] })), { inventory: four, lab });
    expect(r.lab.calls.map((c) => c.host)).toEqual(['h1']);
  });

  it('max_fail_percentage stops the play when exceeded', async () => {
    const lab = fakeLab({ respond: (c) => (c.host === 'h1' && c.argv[1] === 'a' ? { rc: 1, stdout: '', stderr: '' } : ok()) });
    const r = await runModel(playbook(play([cmd('echo a'), cmd('echo b')], { maxFailPercentage: 20 })), { inventory: four, lab });
    expect(r.lab.calls.filter((c) => c.argv[1] === 'b')).toHaveLength(0);
    const r2 = await runModel(playbook(play([cmd('echo a'), cmd('echo b')], { maxFailPercentage: 30 })), {
      inventory: four,
      lab: fakeLab({ respond: (c) => (c.host === 'h1' && c.argv[1] === 'a' ? { rc: 1, stdout: '', stderr: '' } : ok()) }),
    });
    expect(r2.lab.calls.filter((c) => c.argv[1] === 'b')).toHaveLength(3);
  });

  it('any_errors_fatal ends the play for every host', async () => {
    const lab = fakeLab({ respond: (c) => (c.host === 'h2' && c.argv[1] === 'a' ? { rc: 1, stdout: '', stderr: '' } : ok()) });
    const r = await runModel(playbook(play([cmd('echo a'), cmd('echo b')], { anyErrorsFatal: true })), { inventory: four, lab });
    expect(r.lab.calls.filter((c) => c.argv[1] === 'b')).toHaveLength(0);
    expect(r.code).toBe(2);
  });

  describe('any_errors_fatal as a condition, evaluated with the failed host\'s variables', () => {
    const h2Fails = () => fakeLab({ respond: (c) => (c.host === 'h2' && c.argv[1] === 'a' ? { rc: 1, stdout: '', stderr: '' } : ok()) });
    const ranB = (r: Awaited<ReturnType<typeof runModel>>) => r.lab.calls.filter((c) => c.argv[1] === 'b').map((c) => c.host);
    const knob = (h2: string) => ({ hosts: { h1: { on_failure: 'continue' }, h2: { on_failure: h2 }, h3: {}, h4: {} } });

    for (const [form, value] of [
      ['bare', "eq on_failure 'stop'"],
      ['braced', "{{ eq on_failure 'stop' }}"],
    ] as const) {
      it(`on a task (${form}): true stops the play for all, false lets the others go on`, async () => {
        const pb = () => playbook(play([cmd('echo a', { anyErrorsFatal: value }), cmd('echo b')]));
        const stop = await runModel(pb(), { inventory: knob('stop'), lab: h2Fails() });
        expect(ranB(stop)).toEqual([]);
        const go = await runModel(pb(), { inventory: knob('continue'), lab: h2Fails() });
        expect(ranB(go)).toEqual(['h1', 'h3', 'h4']);
      });
    }

    it('on a play, and from a block', async () => {
      const stop = await runModel(playbook(play([cmd('echo a'), cmd('echo b')], { anyErrorsFatal: "eq on_failure 'stop'" })), {
        inventory: knob('stop'),
        lab: h2Fails(),
      });
      expect(ranB(stop)).toEqual([]);
      const inBlock = await runModel(
        playbook(play([block({ block: [cmd('echo a')] }, { anyErrorsFatal: "eq on_failure 'stop'" }), cmd('echo b')])),
        { inventory: knob('continue'), lab: h2Fails() },
      );
      expect(ranB(inBlock)).toEqual(['h1', 'h3', 'h4']);
    });

    it('a condition that cannot be evaluated stops the play (the safe side) and says why', async () => {
      const r = await runModel(playbook(play([cmd('echo a', { anyErrorsFatal: 'eq no_such_var 1' }), cmd('echo b')])), {
        inventory: four,
        lab: h2Fails(),
      });
      expect(ranB(r)).toEqual([]);
      const w = r.events.find((e) => e.type === 'warning');
      expect(w).toMatchObject({ host: 'h2', message: expect.stringMatching(/any_errors_fatal could not be evaluated.*no_such_var/) });
    });
  });
});

describe('executor: --tags / --skip-tags that match nothing', () => {
  const pb = () =>
    playbook(
      play([cmd('echo web', { tags: ['web'] }), block({ block: [cmd('echo db')] }, { tags: ['db'] }), cmd('echo a', { tags: ['always'] })]),
    );
  const warnings = (r: Awaited<ReturnType<typeof runModel>>) =>
    r.events.flatMap((e) => (e.type === 'warning' ? [e.message] : []));

  it('warns, naming the tags the playbook has and the nearest one', async () => {
    const r = await runModel(pb(), { options: { tags: ['wbe', 'db'], skipTags: ['dbb'] } });
    expect(warnings(r)).toEqual([
      '--tags "wbe" matches no task of this playbook, so it selects nothing (did you mean "web"?); the tags it has: db, web',
      '--skip-tags "dbb" matches no task of this playbook, so it skips nothing (did you mean "db"?); the tags it has: db, web',
    ]);
    expect(r.lab.argvs('node1')).toEqual(['echo db', 'echo a']);
    expect(r.code).toBe(0);
  });

  it('says nothing for tags that exist or have a meaning of their own', async () => {
    const r = await runModel(pb(), { options: { tags: ['web', 'all', 'tagged', 'untagged', 'never'], skipTags: ['always'] } });
    expect(warnings(r)).toEqual([]);
  });

  it('a playbook without tags says so', async () => {
    const r = await runModel(playbook(play([cmd('echo x')])), { options: { tags: ['power'] } });
    expect(warnings(r)).toEqual(['--tags "power" matches no task of this playbook, so it selects nothing; it has no tags']);
  });
});

describe('executor: tags, --start-at-task, --limit', () => {
  const pb = () =>
    playbook(
      play([
        cmd('echo plain'),
        cmd('echo web', { tags: ['web'] }),
        block({ block: [cmd('echo db')] }, { tags: ['db'] }),
        cmd('echo always', { tags: ['always'] }),
        cmd('echo never', { tags: ['never', 'debug'] }),
      ]),
    );
  it('no filter: everything but never', async () => {
    const r = await runModel(pb());
    expect(r.lab.argvs('node1')).toEqual(['echo plain', 'echo web', 'echo db', 'echo always']);
  });
  it('--tags selects (block tags inherited) plus always', async () => {
    const r = await runModel(pb(), { options: { tags: ['db'] } });
    expect(r.lab.argvs('node1')).toEqual(['echo db', 'echo always']);
  });
  it('--tags debug runs a never task', async () => {
    const r = await runModel(pb(), { options: { tags: ['debug'] } });
    expect(r.lab.argvs('node1')).toEqual(['echo always', 'echo never']);
  });
  it('--skip-tags', async () => {
    const r = await runModel(pb(), { options: { skipTags: ['web', 'always'] } });
    expect(r.lab.argvs('node1')).toEqual(['echo plain', 'echo db']);
  });
  it('play tags are inherited', async () => {
    const r = await runModel(playbook(play([cmd('echo x')], { tags: ['p'] }), play([cmd('echo y')], { tags: ['q'] })), {
      options: { tags: ['q'] },
    });
    expect(r.lab.argvs('node1')).toEqual(['echo y']);
  });
  it('--start-at-task skips what comes before, across plays', async () => {
    const r = await runModel(
      playbook(play([cmd('echo 1')]), play([cmd('echo 2'), block({ block: [cmd('echo 3', { name: 'three' })] }), cmd('echo 4')])),
      { options: { startAtTask: 'thr*' } },
    );
    expect(r.lab.argvs('node1')).toEqual(['echo 3', 'echo 4']);
  });
  it('--start-at-task naming no task is refused before anything runs, with a suggestion', async () => {
    const pb = playbook(play([cmd('echo 1', { name: 'Pull the image' })]));
    await expect(runModel(pb, { options: { startAtTask: 'Pull the imag' } })).rejects.toThrow(/no task named "Pull the imag"/);
    await expect(runModel(pb, { options: { startAtTask: 'Pull the imag' } })).rejects.toMatchObject({
      hint: 'did you mean "Pull the image"?',
      exitCode: 5,
    });
  });
  it('--limit intersects with the play hosts', async () => {
    const r = await runModel(playbook(play([cmd('echo x')], { hosts: 'a:b' })), {
      inventory: { hosts: { a: {}, b: {}, c: {} } },
      options: { limit: 'b:c' },
    });
    expect(r.lab.calls.map((c) => c.host)).toEqual(['b']);
  });
});

describe('executor: run_once, delegate_to, meta, set_fact', () => {
  const two = { hosts: { a: {}, b: {} } };
  it('run_once runs on the first host and shares the registered result', async () => {
    const r = await runModel(
      playbook(play([cmd('echo once', { runOnce: true, register: 'o' }), task('debug', { msg: '{{ o.stdout }}' }, { name: 'd' })])),
      { inventory: two, lab: fakeLab({ respond: (c) => ok(`from ${c.host}`) }) },
    );
    expect(r.lab.calls.map((c) => c.host)).toEqual(['a']);
    expect(r.resultOf('b', 'd')!.result!.msg).toBe('from a');
  });

  it('a failing run_once task fails every host', async () => {
    const r = await runModel(playbook(play([cmd('echo FAIL', { runOnce: true }), cmd('echo after')])), {
      inventory: two,
      lab: failOn('FAIL'),
    });
    expect(r.lab.calls.map((c) => `${c.host}:${c.argv[1]}`)).toEqual(['a:FAIL']);
    expect(r.code).toBe(2);
  });

  it('delegate_to localhost uses a local connection; to another host, that host', async () => {
    const r = await runModel(
      playbook(play([cmd('echo here', { delegateTo: 'localhost' }), cmd('echo there', { delegateTo: '{{ peer }}' })], { hosts: 'a' })),
      { inventory: { hosts: { a: { peer: 'b' }, b: {} } } },
    );
    expect(r.lab.specs.map((s) => `${s.connection}:${s.host}`)).toEqual(['local:localhost', 'ssh:b']);
    expect(r.resultOf('a', 'echo there')!.status).toBe('changed');
  });

  it('meta end_host stops only that host; end_play stops all', async () => {
    const r = await runModel(
      playbook(play([task('meta', { action: 'end_host' }, { when: when('eq inventory_hostname "a"') }), cmd('echo x')])),
      { inventory: two },
    );
    expect(r.lab.calls.map((c) => c.host)).toEqual(['b']);
    const r2 = await runModel(playbook(play([task('meta', { action: 'end_play' }, { runOnce: true }), cmd('echo x')])), { inventory: two });
    expect(r2.lab.calls).toHaveLength(0);
  });

  it('set_fact sets host vars above play and task vars, persisting across plays', async () => {
    const r = await runModel(
      playbook(
        play([task('set_fact', { v: 'fact-{{ inventory_hostname }}' }), task('debug', { msg: '{{ v }}' }, { name: 'd1', vars: { v: 'task' } })], {
          vars: { v: 'play' },
        }),
        play([task('debug', { msg: '{{ v }}' }, { name: 'd2' })]),
      ),
    );
    expect(r.resultOf('node1', 'd1')!.result!.msg).toBe('fact-node1');
    expect(r.resultOf('node1', 'd2')!.result!.msg).toBe('fact-node1');
  });

  it('templated task names are rendered once per task (raw when they cannot be)', async () => {
    const r = await runModel(
      playbook(play([cmd('echo 1', { name: 'Say {{ greeting }}' }), cmd('echo {{ item }}', { name: 'Item {{ item }}', loop: [1] })], { vars: { greeting: 'hi' } })),
    );
    expect(r.results()).toEqual(['node1 Say hi changed', 'node1 Item {{ item }} changed']);
    expect(r.events.filter((e) => e.type === 'task_start').map((e) => (e as { task: string }).task)).toEqual(['Say hi', 'Item {{ item }}']);
  });

  it('debug verbosity: skipped below the -v level', async () => {
    const pb = () => playbook(play([task('debug', { msg: 'detail', verbosity: 2 }, { name: 'd' })]));
    expect((await runModel(pb(), { options: { verbosity: 1 } })).resultOf('node1', 'd')!.status).toBe('skipped');
    expect((await runModel(pb(), { options: { verbosity: 2 } })).resultOf('node1', 'd')!.result!.msg).toBe('detail');
  });

  it('assert and fail', async () => {
    const r = await runModel(
      playbook(
        play([
          task('assert', { that: ['eq x 1', 'x'] }, { name: 'good' }),
          task('assert', { that: 'eq x 2', fail_msg: 'x is not 2' }, { name: 'bad', ignoreErrors: true }),
          task('fail', { msg: 'stop' }, { name: 'f' }),
        ], { vars: { x: 1 } }),
      ),
    );
    expect(r.results()).toEqual(['node1 good ok', 'node1 bad ignored', 'node1 f failed']);
    expect(r.resultOf('node1', 'bad')!.result!.msg).toBe('x is not 2');
  });

  it('include_tasks loads the templated file at run time, relative to its baseDir', async () => {
    const seen: string[] = [];
    const r = await runModel(playbook(play([include('tasks/{{ kind }}.yml', { vars: {} })], { vars: { kind: 'disk' } })), {
      loadTaskFile: (file) => {
        seen.push(file);
        return [cmd('echo included')];
      },
    });
    expect(seen).toEqual(['/pb/tasks/disk.yml']);
    expect(r.lab.argvs('node1')).toEqual(['echo included']);
    const loads: string[] = [];
    const r2 = await runModel(playbook(play([include('tasks/{{ kind }}.yml')])), {
      inventory: { hosts: { a: { kind: 'x' }, b: { kind: 'x' }, c: { kind: 'y' } } },
      loadTaskFile: (file) => {
        loads.push(file);
        return [cmd(`echo ${file.endsWith('x.yml') ? 'x' : 'y'}`)];
      },
    });
    expect(loads.sort()).toEqual(['/pb/tasks/x.yml', '/pb/tasks/y.yml']);
    expect(r2.lab.calls.map((c) => `${c.host}:${c.argv[1]}`).sort()).toEqual(['a:x', 'b:x', 'c:y']);
  });

  it('an include that fails to load fails the host at the include', async () => {
    const r = await runModel(playbook(play([include('missing.yml', { name: 'inc' })])), {
      loadTaskFile: () => {
        throw new Error('cannot read missing.yml');
      },
    });
    expect(r.resultOf('node1', 'inc')!.status).toBe('failed');
    expect(r.code).toBe(2);
  });
});

describe('executor: check mode, no_log, timeout, SIGINT', () => {
  const nocheck = defineModule({
    name: 'nocheck',
    summary: 'test',
    runsOn: 'target',
    args: Type.Object({}),
    checkMode: false,
    example: '',
    async run(ctx) {
      await ctx.exec(['touch', 'x']);
      return { changed: true };
    },
  });
  const slow = defineModule({
    name: 'slow',
    summary: 'test',
    runsOn: 'target',
    args: Type.Object({}),
    checkMode: true,
    example: '',
    async run(ctx) {
      await ctx.exec(['sleep', '100']);
      return { changed: true };
    },
  });

  it('--check skips modules without check mode support with a note', async () => {
    const r = await runModel(playbook(play([task('nocheck', {}, { name: 'n' })])), { modules: [nocheck], options: { check: true } });
    expect(r.lab.calls).toHaveLength(0);
    const res = r.resultOf('node1', 'n')!;
    expect(res.status).toBe('skipped');
    expect(res.msg).toContain('does not support check mode');
    expect(r.resultOf('node1', 'n')).toBeTruthy();
  });

  it('tsbm_check_mode is visible to templates', async () => {
    const r = await runModel(playbook(play([task('debug', { msg: '{{ tsbm_check_mode }}' }, { name: 'd' })])), { options: { check: true } });
    expect(r.resultOf('node1', 'd')!.result!.msg).toBe(true);
  });

  it('no_log censors args and result in events and registers values as secrets', async () => {
    const r = await runModel(
      playbook(play([cmd('echo hunter22', { noLog: true, name: 'secretive' })])),
      { lab: fakeLab({ respond: () => ok('the output hunter22') }) },
    );
    const all = JSON.stringify(r.events);
    expect(all).not.toContain('hunter22');
    expect(r.resultOf('node1', 'secretive')!.result!.censored).toMatch(/no_log/);
    expect(r.redactor.redact('x hunter22 y')).toBe('x ******** y');
  });

  it('secret-named vars are registered with the redactor, at every level', async () => {
    const role = { name: 'r', path: '/pb/roles/r', defaults: { role_token: 'tok-default' }, vars: { api_secret: 'role-secret' } };
    const pb = playbook(
      play([block({ block: [cmd('true', { role, vars: { task_password: 'task-pw' } })] }, { vars: { block_token: 'blk-tok' } })], {
        vars: { bmc_password: 'pa55word' },
        varsFiles: [{ file_secret: 'from-file' }],
      }),
    );
    for (let i = 0; i < 2; i++) {
      const r = await runModel(pb, { inventory: { hosts: { node1: { inv_password: 'inv-pw' } } }, options: { extraVars: { x_token: 'xtra' } } });
      for (const v of ['pa55word', 'tok-default', 'role-secret', 'task-pw', 'blk-tok', 'from-file', 'inv-pw', 'xtra']) {
        expect(r.redactor.redact(v)).toBe('********');
      }
    }
  });

  it('timeout aborts the module and fails cleanly', async () => {
    const r = await runModel(playbook(play([task('slow', {}, { name: 's', timeout: 1 }), cmd('echo next')])), {
      modules: [slow],
      lab: fakeLab({ respond: () => new Promise(() => {}) }),
    });
    const res = r.resultOf('node1', 's')!;
    expect(res.status).toBe('failed');
    expect(res.msg).toContain('timed out after 1s');
    expect(r.lab.calls[0]!.opts!.signal!.aborted).toBe(true);
    expect(r.code).toBe(2);
  });

  it('SIGINT stops scheduling, aborts running tasks after the grace period, emits the recap, exit 99', async () => {
    const ac = new AbortController();
    const r = await runModel(playbook(play([task('slow', {}, { name: 's' }), cmd('echo never')])), {
      modules: [slow],
      signal: ac.signal,
      tuning: { interruptGraceMs: 50 },
      lab: fakeLab({ respond: () => new Promise(() => {}) }),
      onEvent: (e) => {
        if (e.type === 'host_task_start') setTimeout(() => ac.abort(), 20);
      },
    });
    expect(r.code).toBe(99);
    expect(r.lab.argvs('node1')).toEqual(['sleep 100']);
    expect(r.events.some((e) => e.type === 'recap')).toBe(true);
    expect(r.events.at(-1)).toMatchObject({ type: 'run_end', exitCode: 99 });
    expect(r.lab.opened.every((c) => c.closed)).toBe(true);
  });

  it('connections are closed at the end of the run', async () => {
    const r = await runModel(playbook(play([cmd('echo 1'), cmd('echo 2')])));
    expect(r.lab.opened).toHaveLength(1);
    expect(r.lab.opened[0]!.closed).toBe(true);
  });
});

describe('executor: run-wide behaviour', () => {
  const fourHosts = { hosts: { h1: {}, h2: {}, h3: {}, h4: {} } };
  it('any_errors_fatal keeps the batch out of later plays (not counted as failed)', async () => {
    const lab = fakeLab({ respond: (c) => (c.host === 'h2' && c.argv[1] === 'a' ? { rc: 1, stdout: '', stderr: '' } : ok()) });
    const r = await runModel(playbook(play([cmd('echo a')], { anyErrorsFatal: true }), play([cmd('echo later')])), {
      inventory: fourHosts,
      lab,
    });
    expect(r.lab.calls.filter((c) => c.argv[1] === 'later')).toHaveLength(0);
    expect(r.recap().h1).toMatchObject({ failed: 0, ok: 1 });
  });

  it('a host that failed in one play is not in later plays', async () => {
    const lab = fakeLab({ respond: (c) => (c.host === 'h1' ? { rc: 1, stdout: '', stderr: '' } : ok()) });
    const r = await runModel(playbook(play([cmd('echo a')]), play([cmd('echo b')])), { inventory: fourHosts, lab });
    expect(r.lab.calls.filter((c) => c.argv[1] === 'b').map((c) => c.host)).toEqual(['h2', 'h3', 'h4']);
  });

  it('--shard runs only the hosts of that slice', async () => {
    const { inShard } = await import('../../src/executor/shard.js');
    const shard = { index: 2, total: 3 };
    const r = await runModel(playbook(play([cmd('echo a')])), { inventory: fourHosts, options: { shard } });
    const expected = Object.keys(fourHosts.hosts).filter((h) => inShard(h, shard));
    expect(r.lab.calls.map((c) => c.host).sort()).toEqual(expected);
  });

  it('facts returned by a module accumulate under `facts`; gather_facts: true runs the gather module first', async () => {
    let n = 0;
    const gather = defineModule({
      name: 'gather_facts',
      summary: 'test',
      runsOn: 'target',
      args: Type.Object({}),
      checkMode: true,
      example: '',
      async run() {
        n++;
        return { changed: false, facts: n === 1 ? { memory: 1, cpus: 2 } : { cpus: 4 } };
      },
    });
    const r = await runModel(
      playbook(play([task('gather_facts', {}), task('debug', { msg: '{{ facts.memory }}/{{ facts.cpus }}' }, { name: 'd' })], { gatherFacts: true })),
      { modules: [gather], options: { startAtTask: 'd' } },
    );
    expect(r.results()[0]).toBe('node1 Gathering Facts ok');
    expect(r.resultOf('node1', 'd')!.result!.msg).toBe('1/2');
  });

  it('hosts waiting for a fork do not start once interrupted', async () => {
    const ac = new AbortController();
    const lab = fakeLab({
      respond: async () => {
        ac.abort();
        await new Promise((res) => setTimeout(res, 20));
        return ok();
      },
    });
    const r = await runModel(playbook(play([cmd('echo a')])), { inventory: fourHosts, lab, signal: ac.signal, options: { forks: 1 } });
    expect(r.lab.calls).toHaveLength(1);
    expect(r.code).toBe(99);
  });
});

describe('executor: include_tasks when', () => {
  it("is evaluated once for the include, not again for each included task", async () => {
    const r = await runModel(playbook(play([include('x.yml', { when: when('not (defined done)') })])), {
      loadTaskFile: () => [task('set_fact', { done: true }), cmd('echo still-runs')],
    });
    expect(r.lab.argvs('node1')).toEqual(['echo still-runs']);
  });
});
