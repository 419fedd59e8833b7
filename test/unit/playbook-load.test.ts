import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TsbmError } from '../../src/errors.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import type { Block, IncludeTasks, Task } from '../../src/playbook/model.js';
import { fixtureLookup } from './playbook-fixture-modules.js';
import { thrownBy } from '../helpers/thrown.js';

const FIX = relative(process.cwd(), join(import.meta.dirname, '..', 'fixtures', 'playbooks', 'full'));
const BAD = relative(process.cwd(), join(import.meta.dirname, '..', 'fixtures', 'bad'));
const load = (f: string) => loadPlaybook(f, fixtureLookup);

describe('loadPlaybook: the full-feature fixture', () => {
  const pb = load(join(FIX, 'site.yml'));
  const [first, second] = pb.plays;

  it('loads plays, inlining import_playbook with its vars', () => {
    expect(pb.plays).toHaveLength(2);
    expect(first!.name).toBe('Prepare');
    expect(second!.hosts).toBe('all');
    expect(second!.vars).toEqual({ from_import: 1 });
    expect(second!.gatherFacts).toBe(true);
  });

  it('reads play keywords, with gather_facts false by default', () => {
    expect(first!.gatherFacts).toBe(false);
    expect(first!.serial).toEqual([1, '50%']);
    expect(first!.maxFailPercentage).toBe(20);
    expect(first!.strategy).toBe('free');
    expect(first!.tags).toEqual(['deploy']);
    expect(first!.varsFiles).toEqual([{ common_var: 1 }]);
    expect(first!.keyPos.hosts).toEqual({ file: join(FIX, 'site.yml'), line: 3, col: 3 });
  });

  it('maps FQCN module names to the short name and keeps positions and ids', () => {
    const greet = first!.preTasks[0] as Task;
    expect(greet.module).toBe('debug');
    expect(greet.args).toEqual({ msg: 'deploying {{ image }} on {{ inventory_hostname }}' });
    expect(greet.pos).toEqual({ file: join(FIX, 'site.yml'), line: 13, col: 7 });
    expect(greet.id).toBe('site.yml:13:7');
    expect(greet.argsPos.line).toBe(15);
  });

  it('wraps role tasks in blocks carrying the role context; role handlers follow play handlers', () => {
    expect(first!.roleTasks).toHaveLength(2);
    const [r1, r2] = first!.roleTasks as Block[];
    expect(r1!.role?.name).toBe('power');
    expect(r1!.role?.defaults).toEqual({ power_state: 'Off', role_default: 'd' });
    expect(r1!.role?.vars).toEqual({ role_var: 'v' });
    expect(r2!.vars).toEqual({ power_state: 'On' });
    expect(r2!.tags).toEqual(['again']);
    const inner = r1!.block[0] as Task;
    expect(inner.role?.name).toBe('power');
    expect(inner.pos.file).toBe(join(FIX, 'roles', 'power', 'tasks', 'main.yml'));
    expect(inner.id).toBe('roles/power/tasks/main.yml:1:3');
    expect(first!.handlers.map((h) => h.name)).toEqual(['restart things', 'power handler', 'power handler']);
    expect(first!.handlers[0]!.listen).toEqual(['restart things', 'restart all']);
  });

  it('reads task keywords', () => {
    const t = first!.tasks[0] as Task;
    expect(t.loop).toEqual(['sda', 'sdb']);
    expect(t.loopControl).toEqual({ loopVar: 'disk' });
    expect(t.register).toBe('looped');
    expect(t.when.map((w) => w.expr)).toEqual(['defined image', 'true']);
    expect(t.when[0]!.pos.line).toBe(30);
    expect(t.until?.expr).toBe('eq looped.changed false');
    expect([t.retries, t.delay, t.timeout]).toEqual([5, 2, 30]);
    expect(t.notify).toEqual(['restart things']);
    expect(t.resume).toBe('rerun');
    expect(t.noLog).toBe(true);
    expect(t.keyPos.register!.line).toBe(28);
  });

  it('inlines import_tasks as a block, keeps include_tasks as nodes', () => {
    const b = first!.tasks[1] as Block;
    expect(b.kind).toBe('block');
    expect(b.become).toBe(true);
    const imported = b.block[0] as Block;
    expect(imported.kind).toBe('block');
    expect((imported.block[0] as Task).name).toBe('Inner task');
    const inc = b.block[1] as IncludeTasks;
    expect(inc.kind).toBe('include_tasks');
    // Made absolute so the executor's resolve against baseDir leaves it alone.
    expect(inc.file).toBe(resolve(FIX, 'tasks', 'inner.yml'));
    expect((b.block[2] as IncludeTasks).file).toBe(
      resolve(FIX, 'tasks', "{{ default flavour 'inner' }}.yml"),
    );
    expect((b.rescue[0] as Task).module).toBe('fail');
    expect((b.always[0] as Task).args).toEqual({ done_flag: true });
  });

  it('puts free-form arguments under the module freeForm key and merges args:', () => {
    const t = first!.tasks[2] as Task;
    expect(t.module).toBe('command');
    expect(t.args).toEqual({ cmd: 'echo hello', chdir: '/tmp' });
  });
});

describe('loadPlaybook: errors', () => {
  it('throws the first error with its position when not collecting', () => {
    expect(() => load(join(BAD, 'task-unknown-key.yml'))).toThrow(
      /unknown key "retires" in task "Install" \(did you mean "retries"\?\)/,
    );
    const e = thrownBy(() => load(join(BAD, 'task-unknown-key.yml')));
    expect((e as TsbmError).pos).toEqual({ file: join(BAD, 'task-unknown-key.yml'), line: 5, col: 7 });
    expect((e as TsbmError).exitCode).toBe(4);
  });

  it('names the whole chain of a circular import', () => {
    expect(() => load(join(BAD, 'circular-import.yml'))).toThrow(
      'circular import: circular/a.yml -> circular/b.yml -> circular/a.yml',
    );
  });

  it('collects every error with onError and keeps what loaded', () => {
    const errors: TsbmError[] = [];
    const pb = loadPlaybook(join(BAD, '..', 'playbooks', 'many-errors.yml'), {
      ...fixtureLookup,
      onError: (e) => errors.push(e),
    });
    expect(errors.map((e) => `${e.pos?.line}:${e.pos?.col} ${e.message}`)).toEqual([
      '4:7 unknown key "retires" in task "One" (did you mean "retries"?)',
      '8:9 missing required argument "state" for module redfish_power',
      '10:46 "timeout" must be an integer, got string "soon" in module redfish_power',
    ]);
    expect(pb.plays[0]!.tasks.map((t) => t.name)).toEqual(['Fine']);
  });

  it('accepts templates where a number, boolean or enum is expected', () => {
    const pb = loadPlaybook(join(BAD, '..', 'playbooks', 'templated-args.yml'), fixtureLookup);
    const t = pb.plays[0]!.tasks[0] as Task;
    expect(t.args).toEqual({ state: '{{ desired }}', timeout: '{{ 60 }}', wait: '{{ do_wait }}' });
  });
});

describe('loadTasksFile (include_tasks at run time)', () => {
  it('loads a task file with ids relative to the playbook directory', async () => {
    const { loadTasksFile } = await import('../../src/playbook/load.js');
    const from = { file: join(FIX, 'site.yml'), line: 41, col: 11 };
    const tasks = loadTasksFile(join(FIX, 'tasks', 'inner.yml'), from, FIX, undefined, fixtureLookup);
    expect(tasks).toHaveLength(1);
    expect(tasks[0]!.id).toBe('tasks/inner.yml:1:3');
    expect((tasks[0] as Task).module).toBe('debug');
  });

  it('reports a missing file at the include', async () => {
    const { loadTasksFile } = await import('../../src/playbook/load.js');
    const from = { file: join(FIX, 'site.yml'), line: 41, col: 11 };
    expect(() => loadTasksFile(join(FIX, 'tasks', 'gone.yml'), from, FIX, undefined, fixtureLookup)).toThrow(
      /cannot read .*gone\.yml: file not found/,
    );
  });
});

describe('empty play sections', () => {
  it('treats `tasks:` (and vars, roles, handlers) with nothing after them as empty, as Ansible does', () => {
    const pb = load(join(BAD, '..', 'playbooks', 'empty-sections.yml'));
    const p = pb.plays[0]!;
    expect([p.vars, p.tasks, p.preTasks, p.postTasks, p.handlers, p.roles]).toEqual([{}, [], [], [], [], []]);
  });
});

describe('import_role / include_role', () => {
  it('inlines the role (tasks_from, parameters, keywords) and adds its handlers to the play', () => {
    const pb = load(join(FIX, 'import-role.yml'));
    const [first, second] = pb.plays[0]!.tasks as Block[];
    expect(first!.kind).toBe('block');
    expect(first!.role?.name).toBe('power');
    expect(first!.vars).toEqual({ power_state: 'On' });
    expect(first!.when.map((w) => w.expr)).toEqual(['do_power']);
    expect((first!.block[0] as Task).name).toBe('Cycle power');
    expect((first!.block[0] as Task).role?.defaults).toEqual({ power_state: 'Off', role_default: 'd' });
    expect((second!.block[0] as Task).name).toBe('Power the node');
    expect(pb.plays[0]!.handlers.map((h) => h.name)).toEqual(['power handler', 'power handler']);
  });
});
