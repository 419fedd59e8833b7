import { describe, expect, it } from 'vitest';
import { buildRunOptions, parseForks, splitList } from '../../src/cli/run-options.js';
import { TsbmError } from '../../src/errors.js';
import { thrownBy } from '../helpers/thrown.js';

const env = { verbosity: 0 as const, stdoutIsTTY: false };

describe('tsbm run options', () => {
  it('fills defaults', () => {
    expect(buildRunOptions('site.yml', {}, env)).toEqual({
      playbook: 'site.yml',
      inventories: [],
      tags: [],
      skipTags: [],
      extraVars: {},
      forks: 50,
      check: false,
      diff: false,
      listHosts: false,
      listTasks: false,
      listTags: false,
      syntaxCheck: false,
      output: 'plain',
      verbosity: 0,
    });
    expect(buildRunOptions('site.yml', {}, { verbosity: 2, stdoutIsTTY: true })).toMatchObject({ output: 'tty', verbosity: 2 });
  });

  it('takes every flag', () => {
    const o = buildRunOptions(
      'p.yml',
      {
        inventory: ['a.yml', 'b.yml'],
        limit: ['rack1', '!node7'],
        tags: ['a,b', ' c ,,a'],
        skipTags: ['slow'],
        extraVars: ['x=1', '{"x": 2, "y": 3}'],
        forks: '7',
        check: true,
        diff: true,
        startAtTask: 'Power on',
        listHosts: true,
        listTasks: true,
        listTags: true,
        syntaxCheck: true,
        output: 'json',
        junit: 'out.xml',
      },
      env,
    );
    expect(o).toMatchObject({
      inventories: ['a.yml', 'b.yml'],
      limit: 'rack1:!node7',
      tags: ['a', 'b', 'c'],
      skipTags: ['slow'],
      extraVars: { x: 2, y: 3 },
      forks: 7,
      check: true,
      diff: true,
      startAtTask: 'Power on',
      listHosts: true,
      listTasks: true,
      listTags: true,
      syntaxCheck: true,
      output: 'json',
      junit: 'out.xml',
    });
  });

  it('rejects bad values with exit 5', () => {
    for (const bad of ['0', '-1', 'x', '1.5', '']) {
      expect(() => parseForks(bad)).toThrow(TsbmError);
    }
    const cases: Array<() => unknown> = [
      () => buildRunOptions('p.yml', { output: 'html' }, env),
      () => buildRunOptions('p.yml', { startAtTask: ' ' }, env),
      () => buildRunOptions('p.yml', { junit: '' }, env),
      () => buildRunOptions(' ', {}, env),
      () => buildRunOptions('p.yml', { extraVars: ['nope'] }, env),
    ];
    for (const c of cases) {
      const e = thrownBy(() => c());
      expect(e).toBeInstanceOf(TsbmError);
      expect((e as TsbmError).exitCode).toBe(5);
    }
    expect(parseForks(undefined)).toBe(50);
  });

  it('splits comma lists', () => {
    expect(splitList(['a, b', 'b,c', ''])).toEqual(['a', 'b', 'c']);
    expect(splitList(undefined)).toEqual([]);
  });
});

describe('--roles-path', () => {
  it('splits on the path separator, repeatable, blanks dropped', () => {
    expect(buildRunOptions('p.yml', { rolesPath: ['a:b', ' c ', ''] }, env).rolesPath).toEqual(['a', 'b', 'c']);
    expect(buildRunOptions('p.yml', {}, env).rolesPath).toBeUndefined();
  });
});

describe('--junit-cases', () => {
  it('host or task, and only with --junit', () => {
    expect(buildRunOptions('p.yml', { junit: 'j.xml', junitCases: 'task' }, env).junitCases).toBe('task');
    expect(buildRunOptions('p.yml', { junit: 'j.xml' }, env).junitCases).toBeUndefined();
    expect(() => buildRunOptions('p.yml', { junit: 'j.xml', junitCases: 'play' }, env)).toThrow(/--junit-cases must be host or task/);
    expect(() => buildRunOptions('p.yml', { junitCases: 'task' }, env)).toThrow(/--junit-cases needs --junit FILE/);
  });
});
