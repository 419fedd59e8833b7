import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EventBus } from '../../src/output/events.js';
import { attachJUnit } from '../../src/output/junit.js';
import { Redactor } from '../../src/output/redact.js';
import { xmlEscape } from '../../src/output/xml.js';
import { sampleRun } from './output-sequence.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-junit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Parses the file back with a real XML parser (Python's ElementTree) into plain JSON. */
function parseBack(file: string): {
  suites: { name: string; tests: string; failures: string; skipped: string; cases: { name: string; classname: string; failure?: string; failureText?: string; skipped: boolean; out?: string }[] }[];
} {
  const py = `
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = []
for s in root.findall('testsuite'):
    cases = []
    for c in s.findall('testcase'):
        f = c.find('failure')
        o = c.find('system-out')
        cases.append({'name': c.get('name'), 'classname': c.get('classname'), 'failure': f.get('message') if f is not None else None,
                      'failureText': f.text if f is not None else None,
                      'skipped': c.find('skipped') is not None, 'out': o.text if o is not None else None})
    suites.append({'name': s.get('name'), 'tests': s.get('tests'), 'failures': s.get('failures'), 'skipped': s.get('skipped'), 'cases': cases})
print(json.dumps({'suites': suites}))
`;
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', py, file], { encoding: 'utf8' }));
}

describe('JUnit writer', () => {
  it('--junit-cases task: a testsuite per play and a testcase per (host, task), loop items folded', async () => {
    const bus = new EventBus();
    const file = join(dir, 'a.xml');
    const j = attachJUnit(bus, file, 'task');
    for (const e of sampleRun()) bus.emit(e);
    await j.done();
    const r = parseBack(file);
    expect(r.suites).toHaveLength(1);
    const s = r.suites[0]!;
    expect(s).toMatchObject({ name: 'Deploy', tests: '4', failures: '1', skipped: '0' });
    expect(s.cases.map((c) => c.name)).toEqual(['node1: Power off', 'node2: Power off', 'node1: Wait for agent', 'node1: Install']);
    expect(s.cases[1]!.failure).toBe('BMC answered 401\nUnauthorized');
    expect(s.cases[0]!.failure).toBeNull();
    // skipped item + ok item of one loop = one passing testcase
    expect(s.cases[3]!.skipped).toBe(false);
  });

  it('marks skipped and unreachable, and escapes hostile strings so they parse back intact', async () => {
    const hostile = 'a & b < c > d "q" \'s\' ]]> <![CDATA[x]]> \u0001\u001b[31m tab\tend';
    const bus = new EventBus();
    const file = join(dir, 'b.xml');
    const j = attachJUnit(bus, file, 'task');
    bus.emit({ type: 'play_start', time: 0, play: `play ${hostile}`, hosts: ['h'] });
    bus.emit({ type: 'host_result', time: 1, host: 'h<1>', task: hostile, taskId: 't1', status: 'failed', changed: false, msg: hostile, durationMs: 5 });
    bus.emit({ type: 'host_result', time: 2, host: 'h2', task: 'skip me', taskId: 't2', status: 'skipped', changed: false, msg: 'when was false', durationMs: 0 });
    bus.emit({ type: 'host_result', time: 3, host: 'h3', task: 'reach', taskId: 't3', status: 'unreachable', changed: false, msg: 'no route', durationMs: 0 });
    await j.done();
    const xml = readFileSync(file, 'utf8');
    expect(xml).not.toContain(']]>');
    expect(xml).not.toMatch(/[\u0001\u001b]/);
    const s = parseBack(file).suites[0]!;
    const cleaned = hostile.replace(/[\u0001\u001b]/g, '\uFFFD');
    expect(s.name).toBe(`play ${cleaned}`);
    expect(s.cases[0]!.name).toBe(`h<1>: ${cleaned}`);
    expect(s.cases[0]!.failure).toBe(cleaned);
    expect(s.cases[0]!.failureText).toBe(cleaned);
    expect(s.cases[1]!.skipped).toBe(true);
    expect(s.cases[2]!.failure).toBe('no route');
    expect(s).toMatchObject({ tests: '3', failures: '2', skipped: '1' });
  });

  it('gets redacted events from the bus', async () => {
    const redactor = new Redactor();
    redactor.add('very-secret-token');
    const bus = new EventBus(redactor);
    const file = join(dir, 'c.xml');
    const j = attachJUnit(bus, file);
    bus.emit({ type: 'host_result', time: 1, host: 'h', task: 't', taskId: 't', status: 'failed', changed: false, msg: 'token very-secret-token rejected', durationMs: 1 });
    await j.done();
    expect(readFileSync(file, 'utf8')).not.toContain('very-secret-token');
  });

  it('default: one testcase per host per play, named by host, classname playbook/play, the tasks as steps', async () => {
    const bus = new EventBus();
    const file = join(dir, 'hosts.xml');
    const j = attachJUnit(bus, file);
    for (const e of sampleRun()) bus.emit(e);
    await j.done();
    const s = parseBack(file).suites[0]!;
    expect(s).toMatchObject({ name: 'Deploy', tests: '2', failures: '1', skipped: '0' });
    expect(s.cases.map((c) => [c.name, c.classname])).toEqual([
      ['node1', 'deploy.yml/Deploy'],
      ['node2', 'deploy.yml/Deploy'],
    ]);
    expect(s.cases[0]!.failure).toBeNull();
    expect(s.cases[0]!.out?.split('\n')).toEqual(['changed: Power off (0.4s)', 'ok: Wait for agent (10.0s): agent up', 'ok: Install (0.1s)']);
    expect(s.cases[1]!.failure).toBe('Power off: BMC answered 401\nUnauthorized');
    expect(s.cases[1]!.out).toBe('failed: Power off (1.2s): BMC answered 401\nUnauthorized');
  });

  it('the set of testcases is stable: a host that failed early, or never ran, still has its one testcase', async () => {
    const write = async (name: string, failAt: number | undefined) => {
      const bus = new EventBus();
      const file = join(dir, name);
      const j = attachJUnit(bus, file);
      bus.emit({ type: 'run_start', time: 0, runId: 'r', playbook: '/x/site.yml', version: '0', options: {} });
      bus.emit({ type: 'play_start', time: 0, play: 'P', hosts: ['a', 'b', 'c'] });
      for (const [i, task] of ['one', 'two', 'three'].entries()) {
        for (const host of ['a', 'b']) {
          if (host === 'b' && failAt !== undefined && i > failAt) continue; // b left the play
          const failed = host === 'b' && i === failAt;
          bus.emit({ type: 'host_result', time: i + 1, host, task, taskId: task, status: failed ? 'failed' : 'ok', changed: false, ...(failed ? { msg: 'boom' } : {}), durationMs: 1 });
        }
      }
      await j.done();
      return parseBack(file).suites[0]!;
    };
    const good = await write('stable-1.xml', undefined);
    const bad = await write('stable-2.xml', 0);
    expect(bad.cases.map((c) => c.name)).toEqual(good.cases.map((c) => c.name));
    expect(bad).toMatchObject({ tests: '3', failures: '1', skipped: '1' });
    expect(bad.cases[1]).toMatchObject({ name: 'b', classname: 'site.yml/P', failure: 'one: boom' });
    expect(bad.cases[2]).toMatchObject({ name: 'c', skipped: true, out: null });
  });

  it('a rescued failure is a step, not the host\'s failure; the failure that was not rescued is', async () => {
    const bus = new EventBus();
    const file = join(dir, 'rescued.xml');
    const j = attachJUnit(bus, file);
    bus.emit({ type: 'play_start', time: 0, play: 'P', hosts: ['a', 'b'] });
    const r = (host: string, task: string, status: 'ok' | 'failed' | 'rescued', extra: Record<string, unknown> = {}) =>
      bus.emit({ type: 'host_result', time: 1, host, task, taskId: task, status, changed: false, durationMs: 0, ...extra });
    r('a', 'Pull', 'rescued', { msg: 'pull failed' });
    r('a', 'Power off after the failure', 'ok');
    r('a', 'Report the failure', 'failed', { msg: 'node powered off after "Pull" failed: pull failed' });
    r('b', 'Try', 'rescued', { msg: 'x' });
    r('b', 'Recover', 'ok');
    await j.done();
    const s = parseBack(file).suites[0]!;
    expect(s.cases[0]).toMatchObject({ name: 'a', failure: 'Report the failure: node powered off after "Pull" failed: pull failed' });
    expect(s.cases[0]!.out?.split('\n')[0]).toBe('rescued: Pull (0.0s): pull failed');
    expect(s.cases[1]).toMatchObject({ name: 'b', failure: null, skipped: false });
  });

  it('xmlEscape replaces lone surrogates and keeps valid pairs', () => {
    expect(xmlEscape('x\uD800y')).toBe('x\uFFFDy');
    expect(xmlEscape('😀')).toBe('😀');
  });
});
