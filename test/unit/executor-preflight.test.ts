// tsbm run's checks cover what the run will do: the hosts after --limit and --shard, the tasks
// after --tags / --skip-tags / --start-at-task, and with --resume what each host has left.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunOptions } from '../../src/executor/options.js';
import { preflightValidate } from '../../src/executor/preflight-validate.js';
import { shardOf } from '../../src/executor/shard.js';
import { baseOptions } from '../helpers/executor-model.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-preflight-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

writeFileSync(
  join(dir, 'inv.yml'),
  `all:
  hosts:
    good: { connection: local, cfg: { key: 1 } }
    bad: { connection: local, cfg: {} }
`,
);
writeFileSync(
  join(dir, 'site.yml'),
  `- name: First play
  hosts: all
  tasks:
    - name: Early
      debug: { msg: "{{ cfg.key }}" }
      tags: [early]
- name: Second play
  hosts: all
  tasks:
    - name: Start here
      debug: { msg: ok }
      tags: [late]
    - name: Late
      debug: { msg: "{{ cfg.key }}" }
      tags: [late]
`,
);

const opts = (more: Partial<RunOptions> = {}): RunOptions =>
  baseOptions({ playbook: join(dir, 'site.yml'), inventories: [join(dir, 'inv.yml')], forks: 5, ...more });

const found = (o: RunOptions, pre = {}) =>
  preflightValidate(o, pre).errors.map((e) => `${e.pos?.line ?? '-'} ${e.message.replace(/ \(.*/, '')}`);

const EARLY = '5 undefined variable "cfg.key" in task "Early" for host bad';
const LATE = '14 undefined variable "cfg.key" in task "Late" for host bad';

describe('preflightValidate: what the run targets', () => {
  it('every play, every task, every host by default', () => {
    expect(found(opts())).toEqual([EARLY, LATE]);
  });

  it('--limit and --shard leave out hosts', () => {
    expect(found(opts({ limit: 'good' }))).toEqual([]);
    expect(found(opts({ limit: 'bad' }))).toEqual([EARLY, LATE]);
    const total = 7;
    const shard = { index: shardOf('good', total), total };
    expect(found(opts({ shard }))).toEqual(shardOf('bad', total) === shard.index ? [EARLY, LATE] : []);
  });

  it('--tags and --skip-tags leave out tasks', () => {
    expect(found(opts({ tags: ['late'] }))).toEqual([LATE]);
    expect(found(opts({ skipTags: ['late'] }))).toEqual([EARLY]);
  });

  it('a block whose tasks the run leaves out is not checked either', () => {
    writeFileSync(
      join(dir, 'block.yml'),
      '- hosts: all\n  tasks:\n    - block:\n        - debug: { msg: x }\n          tags: [late]\n      when: "eq cfg.key 1"\n    - debug: { msg: y }\n      tags: [early]\n',
    );
    const block = (more: Partial<RunOptions>) => found(opts({ playbook: join(dir, 'block.yml'), ...more }));
    expect(block({ tags: ['early'] })).toEqual([]);
    expect(block({ tags: ['late'] })).toEqual(['6 undefined variable "cfg.key" in this block for host bad']);
  });

  it('--start-at-task leaves out earlier plays and tasks', () => {
    expect(found(opts({ startAtTask: 'Start here' }))).toEqual([LATE]);
    expect(found(opts({ startAtTask: 'Late' }))).toEqual([LATE]);
  });

  it('--resume leaves out what a host completed', () => {
    const early = preflightValidate(opts()).loaded!.playbook.plays[0]!.tasks[0]!.id;
    expect(found(opts(), { completed: (h: string, id: string) => h === 'bad' && id === early })).toEqual([LATE]);
  });

  it('syntax errors count whatever the selection; what was loaded is handed to the run', () => {
    writeFileSync(join(dir, 'syntax.yml'), '- hosts: all\n  tasks:\n    - debug: { msg: "{{ x | upper }}" }\n      tags: [off]\n');
    const r = preflightValidate(opts({ playbook: join(dir, 'syntax.yml'), tags: ['other'] }));
    expect(r.errors.map((e) => e.message)).toEqual([expect.stringMatching(/^template syntax error: Jinja-style/)]);
    const ok = preflightValidate(opts({ limit: 'good' }));
    expect(ok.loaded?.playbook.plays).toHaveLength(2);
    expect(ok.loaded?.inventory.hosts.has('bad')).toBe(true);
  });

  it('a missing inventory or playbook is one error, no crash', () => {
    expect(found(opts({ inventories: [join(dir, 'nope.yml')] }))).toEqual([`- inventory ${join(dir, 'nope.yml')} not found`]);
    expect(preflightValidate(opts({ playbook: join(dir, 'nope.yml') })).errors).toHaveLength(1);
  });
});
