import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TsbmError } from '../../src/errors.js';
import { loadInventories } from '../../src/inventory/load.js';
import { selectHosts, splitPattern, validatePattern } from '../../src/inventory/patterns.js';
import { thrownBy } from '../helpers/thrown.js';

const FX = join(import.meta.dirname, '../fixtures/inventory');
const inv = () => loadInventories([join(FX, 'ansible-docs/hosts.yml')]);
const sel = (p: string) => selectHosts(inv(), p, { baseDir: join(FX, 'patterns') });
const short = (p: string) => sel(p).map((h) => h.split('.')[0]);

describe('selectHosts', () => {
  it('all and *', () => {
    expect(short('all')).toEqual(['mail', 'foo', 'bar', 'one', 'two', 'three']);
    expect(short('*')).toEqual(short('all'));
  });
  it('host names and groups (through children)', () => {
    expect(short('bar.example.com')).toEqual(['bar']);
    expect(short('prod')).toEqual(['foo', 'one', 'two']);
    expect(short('ungrouped')).toEqual(['mail']);
  });
  it('union with : and , in inventory order without duplicates', () => {
    expect(short('west:webservers')).toEqual(['foo', 'bar', 'three']);
    expect(short('west,webservers')).toEqual(['foo', 'bar', 'three']);
  });
  it('intersection and exclusion, regardless of the order written', () => {
    expect(short('dbservers:&east')).toEqual(['one', 'two']);
    expect(short('all:!dbservers')).toEqual(['mail', 'foo', 'bar']);
    expect(short('!two.example.com:dbservers')).toEqual(['one', 'three']);
    expect(short('webservers:dbservers:&prod:!two.example.com')).toEqual(['foo', 'one']);
  });
  it('globs match hosts and groups', () => {
    // t* matches the group `test` (bar, three) as well as the hosts two and three
    expect(short('*.example.com:!t*')).toEqual(['mail', 'foo', 'one']);
    expect(short('db*')).toEqual(['one', 'two', 'three']);
    expect(short('?ar.example.com')).toEqual(['bar']);
  });
  it('~regex is anchored at the start', () => {
    expect(short('~(foo|bar)\\.')).toEqual(['foo', 'bar']);
    expect(short('~example')).toEqual([]);
    expect(short('~w.st')).toEqual(['bar', 'three']);
  });
  it('@file reads names relative to baseDir', () => {
    expect(short('@limit.txt')).toEqual(['foo', 'three']);
    expect(short('all:!@limit.txt')).toEqual(['mail', 'bar', 'one', 'two']);
  });
  it('no match is an empty list', () => {
    expect(sel('nosuch')).toEqual([]);
  });
  it('localhost is implicit', () => {
    const i = inv();
    expect(selectHosts(i, 'localhost', { baseDir: '.' })).toEqual(['localhost']);
    expect(selectHosts(i, 'all', { baseDir: '.' })).not.toContain('localhost');
  });
  it('bad regex and missing @file are parse errors with hints', () => {
    for (const p of ['~node[', '@missing.txt']) {
      const e = thrownBy(() => sel(p));
      expect(e).toBeInstanceOf(TsbmError);
      expect((e as TsbmError).kind).toBe('parse');
      expect((e as TsbmError).hint).toBeTruthy();
    }
  });
});

describe('validatePattern', () => {
  it('accepts good patterns and rejects bad syntax', () => {
    expect(validatePattern('rack1:!node07')).toBeUndefined();
    expect(validatePattern('~node0[1-4]')).toBeUndefined();
    expect(validatePattern('')?.message).toContain('empty');
    expect(validatePattern('a:&')?.message).toContain('empty term');
    expect(validatePattern('~(')?.message).toContain('regular expression');
    expect(validatePattern('@')?.message).toContain('@');
  });
  it('splits like Ansible', () => {
    expect(splitPattern('a:&b,!c')).toEqual([
      { op: 'or', text: 'a' },
      { op: 'and', text: 'b' },
      { op: 'not', text: 'c' },
    ]);
    expect(splitPattern('~n(?:1|2)')).toEqual([{ op: 'or', text: '~n(?:1|2)' }]);
  });
});
