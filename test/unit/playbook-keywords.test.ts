// The keyword table (src/playbook/keywords.ts) is the one declaration of every keyword: the
// loader's schemas list exactly its keywords per place, the parser converts them with it, and
// the executor's inheritance follows its `inherit` and `unset`.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { effectiveKeywords } from '../../src/executor/keywords.js';
import { KEYWORDS, type KeywordName, keywordsAt } from '../../src/playbook/keywords.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import type { Block, Play, Task } from '../../src/playbook/model.js';
import { blockSchema, handlerKeywordsSchema, playSchema, taskKeywordsSchema } from '../../src/playbook/schema.js';
import { fixtureLookup } from './playbook-fixture-modules.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-keywords-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function load(yaml: string) {
  const f = join(dir, `p${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(f, yaml);
  return loadPlaybook(f, fixtureLookup);
}

const keysOf = (s: { properties: object }) => Object.keys(s.properties);

describe('keyword table', () => {
  it('gives each place exactly its keywords in the loader schemas', () => {
    expect(keysOf(taskKeywordsSchema)).toEqual(keywordsAt('task'));
    expect(keysOf(handlerKeywordsSchema)).toEqual(keywordsAt('handler'));
    expect(keysOf(blockSchema)).toEqual([...keywordsAt('block'), 'block', 'rescue', 'always']);
    const play = keysOf(playSchema);
    expect(play.filter((k) => k in KEYWORDS)).toEqual(keywordsAt('play'));
    expect(play.filter((k) => !(k in KEYWORDS))).toEqual(['pre_tasks', 'roles', 'tasks', 'post_tasks', 'handlers']);
    expect(playSchema.required).toEqual(['hosts']);
  });

  it('puts every keyword somewhere, and a play-level one is inherited or the play\'s own', () => {
    for (const [k, d] of Object.entries(KEYWORDS)) {
      expect(d.where.length, k).toBeGreaterThan(0);
      if (d.inherit !== 'own') expect(d.where, k).toContain('task');
    }
  });

  it('converts values as the model holds them, positions included', () => {
    const pb = load(`- hosts: [a, b]
  serial: 2
  become: true
  tasks:
    - name: t
      debug: {msg: x}
      when: [x, "y"]
      tags: "a, b"
      timeout: 30
      loop: [1]
      with_items: [2]
      loop_control: {loop_var: n, index_var: i}
      until: done
      notify: h
`);
    const play = pb.plays[0]!;
    expect(play.hosts).toBe('a:b');
    expect(play.serial).toEqual([2]);
    expect(play.become).toBe(true);
    const t = play.tasks[0] as Task;
    expect(t.when.map((w) => w.expr)).toEqual(['x', 'y']);
    expect(t.when[1]!.pos.line).toBe(7);
    expect(t.tags).toEqual(['a', 'b']);
    expect(t.timeout).toBe(30);
    expect(t.loop).toEqual([1]); // loop wins over its old spelling
    expect(t.loopControl).toEqual({ loopVar: 'n', indexVar: 'i' });
    expect(t.until?.expr).toBe('done');
    expect(t.notify).toEqual(['h']);
  });

  it('refuses a template where a keyword needs a literal (it used to be dropped silently)', () => {
    const errors: string[] = [];
    const f = join(dir, 'tpl.yml');
    writeFileSync(f, '- hosts: all\n  tasks:\n    - debug: {msg: x}\n      become: "{{ admin }}"\n');
    loadPlaybook(f, { ...fixtureLookup, onError: (e) => errors.push(`${e.pos?.line}:${e.pos?.col} ${e.message}`) });
    expect(errors).toEqual([expect.stringMatching(/^4:15 "become" takes a literal value in this task; templates are not supported/)]);
  });
});

describe('inheritance from the table', () => {
  const pb = load(`- hosts: all
  become: true
  any_errors_fatal: true
  environment: {A: '1'}
  tags: [p]
  tasks:
    - block:
        - debug: {msg: x}
          become: false
          tags: t
          environment: {C: '3'}
      ignore_errors: true
      delegate_to: localhost
      tags: b
      environment: {B: '2'}
      when: outer
`);
  const play = pb.plays[0] as Play;
  const block = play.tasks[0] as Block;
  const task = block.block[0] as Task;
  const kw = effectiveKeywords(play, [block], task);

  it('innermost: the nearest level that sets it wins, the play counts where allowed', () => {
    expect(kw.become).toBe(false);
    expect(kw.ignoreErrors).toBe(true);
    expect(kw.delegateTo).toBe('localhost');
    expect(kw.anyErrorsFatal).toBe(true);
  });

  it("unset innermost keywords take the table's unset value, or stay absent", () => {
    expect(kw.runOnce).toBe(false);
    expect(kw.noLog).toBe(false);
    expect('timeout' in kw).toBe(false);
    expect('becomeUser' in kw).toBe(false);
  });

  it('accumulate: conditions, tags and environments of every level', () => {
    expect(kw.when.map((w) => w.expr)).toEqual(['outer']);
    expect(kw.tags.sort()).toEqual(['b', 'p', 't']);
    expect(kw.environment).toEqual([{ A: '1' }, { B: '2' }, { C: '3' }]);
  });

  it('covers every innermost and accumulate keyword a task can have', () => {
    const innermost = keywordsAt('task').filter((k) => KEYWORDS[k as KeywordName].inherit === 'innermost');
    expect(innermost).toEqual([
      'become',
      'become_user',
      'no_log',
      'ignore_errors',
      'ignore_unreachable',
      'delegate_to',
      'run_once',
      'timeout',
      'any_errors_fatal',
      'check_mode',
      'resume',
    ]);
  });
});
