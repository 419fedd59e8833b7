import { describe, expect, it } from 'vitest';
import { EventBus } from '../../src/output/events.js';
import { attach } from '../../src/output/renderers/plain.js';
import { MemoryStream, rescuedRun, sampleRun, T0 } from './output-sequence.js';

function render(verbosity: 0 | 1 | 2 | 3, color = false): string {
  const bus = new EventBus();
  const out = new MemoryStream();
  const r = attach(bus, { stream: out.asStream(), verbosity, color });
  for (const e of sampleRun()) bus.emit(e);
  void r.done();
  return out.text;
}

describe('plain renderer', () => {
  it('prints one stable line per host result, headers and the recap', () => {
    expect(render(0)).toBe(
      [
        '',
        `PLAY [Deploy] ${'*'.repeat(66)}`,
        '',
        `TASK [Power off] ${'*'.repeat(63)}`,
        'changed: [node1] Power off (0.4s)',
        'failed: [node2] Power off (1.2s): BMC answered 401 Unauthorized',
        '',
        `TASK [Wait for agent] ${'*'.repeat(58)}`,
        'progress: [node1] Wait for agent: pulling image · 1.0 GiB/4.0 GiB 25% ETA 18.0s · 6.0s',
        '[WARNING]: [node1] BMC certificate not verified',
        'retried: [node1] Wait for agent: 1 retry, last: connection refused',
        'ok: [node1] Wait for agent (10.0s): agent up',
        '',
        `RUNNING HANDLER [Install] ${'*'.repeat(54)}`,
        'skipped: [node1] Install (item=a) (0.0s)',
        'ok: [node1] Install (item={"n":1}) (0.0s)',
        '',
        'PLAY RECAP',
        'node1 : ok=3    changed=1    unreachable=0    failed=0    skipped=1    rescued=0    ignored=0',
        'node2 : ok=0    changed=0    unreachable=0    failed=1    skipped=0    rescued=0    ignored=0',
        'Wall time: 12.0s',
        '',
      ].join('\n'),
    );
  });

  it('a rescued failure reads as a failure the moment it happens, and the rescue as cleanup', () => {
    const bus = new EventBus();
    const out = new MemoryStream();
    attach(bus, { stream: out.asStream(), verbosity: 0, color: true });
    for (const e of rescuedRun()) bus.emit(e);
    const lines = out.text.split('\n').map((l) => l.replace(/\x1b\[\d+m/g, ''));
    expect(lines).toContain('failed (rescued): [node2] Pull the image (0.1s): podman pull failed (rc 125): unexpected EOF');
    expect(lines).toContain(`CLEANUP [Power off after the failure] ${'*'.repeat(42)}`);
    expect(lines).toContain(`CLEANUP [Report the failure] ${'*'.repeat(51)}`);
    expect(lines).not.toContain(expect.stringMatching(/^TASK \[(Power off after|Report) /));
    // in red, as failures are
    expect(out.text).toContain('\x1b[31mfailed (rescued):\x1b[0m [node2]');
  });

  it("prints a long wait's progress at growing intervals, sooner when it says something new, its last error whole", () => {
    const bus = new EventBus();
    const out = new MemoryStream();
    attach(bus, { stream: out.asStream(), verbosity: 0 });
    const error = `cannot connect to 127.0.0.1:22: Connection lost before handshake; ${'x'.repeat(150)}`;
    for (let s = 0; s < 600; s++) {
      const stuck = s >= 130 ? '; still waiting for the ramdisk to answer there: agent_timeout says how long' : '';
      const message = `waiting for SSH: ${s}s elapsed, attempt ${s + 1}, last error: ${error}${stuck}`;
      bus.emit({ type: 'progress', time: T0 + s * 1000, host: 'node1', task: 'Wait', taskId: 'w', message });
    }
    const printed = out.text.split('\n').filter((l) => l.startsWith('progress:'));
    expect(printed.map((l) => Number(/waiting for SSH: (\d+)s/.exec(l)![1]))).toEqual([0, 10, 20, 40, 80, 130, 260, 520]);
    expect(printed[0]).toContain(error); // not cut
  });

  it('throttles progress lines for the same host and task (second one 1 s later is dropped)', () => {
    expect(render(0).match(/^progress:/gm)).toHaveLength(1);
  });

  it('has no escape codes unless colour is asked for', () => {
    expect(render(3)).not.toMatch(/\x1b/);
    expect(render(0, true)).toMatch(/\x1b\[31mfailed:\x1b\[0m \[node2\]/);
  });

  it('-v adds arguments and results, -vv commands, -vvv output lines', () => {
    const v1 = render(1);
    expect(v1).toContain('  args: [node1] {"state":"off"}');
    expect(v1).toContain('  result: [node1] {"uuid":"abc"}');
    expect(v1).not.toContain('POST /redfish');
    expect(v1).toContain('tsbm 0.1.0: run r1 of deploy.yml\n');
    expect(v1).toContain('exit code 2\n');
    expect(render(0)).not.toMatch(/exit code|: run r1 of/);
    const v2 = render(2);
    expect(v2).toContain('  [node1] POST /redfish/v1/Systems/1/Actions/ComputerSystem.Reset');
    expect(v2).not.toContain('line one');
    const v3 = render(3);
    expect(v3).toContain('  [node1] line one\n  [node1] line two\n');
  });

  it('prints a diff when a result carries one', () => {
    const bus = new EventBus();
    const out = new MemoryStream();
    attach(bus, { stream: out.asStream(), verbosity: 0 });
    bus.emit({
      type: 'host_result',
      time: 1,
      host: 'h',
      task: 'copy',
      taskId: 't',
      status: 'changed',
      changed: true,
      durationMs: 1,
      diff: { before: 'a\nb\nc', after: 'a\nB\nc', path: '/etc/x' },
    });
    expect(out.text).toContain('--- before: /etc/x\n+++ after: /etc/x\n a\n-b\n+B\n c\n');
  });
});

describe('plain renderer and result payloads', () => {
  it('below -v never walks a result (a fleet run sanitized every result for nothing); -v does', () => {
    for (const verbosity of [0, 1] as const) {
      const bus = new EventBus();
      const out = new MemoryStream();
      attach(bus, { stream: out.asStream(), verbosity });
      let reads = 0;
      const result = {
        get stdout() {
          reads++;
          return 'out\x1b[2J';
        },
      };
      bus.emit({ type: 'host_result', time: 1, host: 'h', task: 'T', taskId: 't', status: 'ok', changed: false, durationMs: 1, result });
      expect(out.text).toContain('ok: [h] T');
      if (verbosity === 0) expect(reads).toBe(0);
      else {
        expect(reads).toBeGreaterThan(0);
        expect(out.text).toContain('"stdout":"out"');
      }
    }
  });
});

describe('plain renderer with hostile text', () => {
  it('prints no escape sequence or control character that came from a message, name or log', () => {
    const bus = new EventBus();
    const out = new MemoryStream();
    attach(bus, { stream: out.asStream(), verbosity: 3 });
    const evil = 'x\x1b[2J\x1b]0;title\x07\x07\r\x9bq\x00y';
    bus.emit({ type: 'task_start', time: 1, play: 'p', task: `T${evil}`, taskId: 't', module: 'm' });
    bus.emit({ type: 'host_result', time: 2, host: `h${evil}`, task: 'T', taskId: 't', status: 'failed', changed: false, msg: evil, durationMs: 1 });
    bus.emit({ type: 'log', time: 3, host: 'h', level: 3, message: `\x1b[31mred\x1b[0m\r\nnext${evil}` });
    bus.emit({ type: 'warning', time: 4, message: evil });
    expect(out.text).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f\x9b]/);
    expect(out.text).toContain('  [h] red\n  [h] next');
    expect(out.text).toContain('failed: [hx');
  });

  it('prints a long message whole, on one line (the advice at its end included)', () => {
    const bus = new EventBus();
    const out = new MemoryStream();
    const r = attach(bus, { stream: out.asStream(), verbosity: 0, color: false });
    const msg = `image checksum mismatch:\n${'0123456789abcdef'.repeat(60)} ${'x'.repeat(500)}; fix image_source or image_os_hash_value`;
    bus.emit({ type: 'host_result', time: 0, host: 'node01', task: 'Write', taskId: 't', status: 'failed', changed: false, msg, durationMs: 0 });
    bus.emit({ type: 'warning', time: 0, message: `w ${'y'.repeat(3000)} END` });
    void r.done();
    const lines = out.text.split('\n').filter(Boolean);
    expect(lines[0]).toBe(`failed: [node01] Write (0.0s): ${msg.replace(/\s+/g, ' ')}`);
    expect(lines[0]!.length).toBeGreaterThan(1500);
    expect(lines[1]).toMatch(/ END$/);
  });

  it('coalesces a host\'s retries into one line with the count and the last error; -v shows each', () => {
    const run = (verbosity: 0 | 1) => {
      const bus = new EventBus();
      const out = new MemoryStream();
      const r = attach(bus, { stream: out.asStream(), verbosity, color: false });
      const base = { task: 'Power off', taskId: 't' };
      for (let i = 1; i <= 30; i++) {
        for (const host of ['node1', 'node2']) {
          bus.emit({ type: 'retry', time: i, host, ...base, attempt: (i % 4) + 1, retries: 4, msg: `retry ${(i % 4) + 1}/4 in 0 ms (BMC b): GET /x: HTTP 503 #${i}` });
        }
      }
      bus.emit({ type: 'host_result', time: 40, host: 'node1', ...base, status: 'ok', changed: false, msg: 'already Off', durationMs: 40 });
      // node2 never reports (an interrupted run): its retries still show, before the recap
      bus.emit({ type: 'recap', time: 50, stats: {}, durationMs: 50 });
      void r.done();
      return out.text.split('\n').filter(Boolean);
    };
    const lines = run(0);
    expect(lines.filter((l) => l.includes('retr'))).toEqual([
      'retried: [node1] Power off: 30 retries, last: retry 3/4 in 0 ms (BMC b): GET /x: HTTP 503 #30',
      'retried: [node2] Power off: 30 retries, last: retry 3/4 in 0 ms (BMC b): GET /x: HTTP 503 #30',
    ]);
    expect(lines.indexOf('ok: [node1] Power off (0.0s): already Off')).toBe(lines.findIndex((l) => l.startsWith('retried: [node1]')) + 1);
    expect(run(1).filter((l) => l.startsWith('retrying: '))).toHaveLength(60);
  });
});

describe('plain renderer under strategy: free', () => {
  it("prints a task's header before each run of its lines, so every line stands under its own task", () => {
    const bus = new EventBus();
    const out = new MemoryStream();
    const r = attach(bus, { stream: out.asStream(), verbosity: 0, color: false });
    const res = (host: string, taskId: string, task: string) =>
      bus.emit({ type: 'host_result', time: T0, host, task, taskId, status: 'ok', changed: false, durationMs: 100 });
    bus.emit({ type: 'play_start', time: T0, play: 'Deploy', hosts: ['fast', 'slow'], strategy: 'free' });
    bus.emit({ type: 'task_start', time: T0, play: 'Deploy', task: 'A', taskId: 'a', module: 'm' });
    res('fast', 'a', 'A');
    bus.emit({ type: 'task_start', time: T0, play: 'Deploy', task: 'B', taskId: 'b', module: 'm' });
    bus.emit({ type: 'progress', time: T0, host: 'fast', task: 'B', taskId: 'b', message: 'waiting' });
    res('slow', 'a', 'A');
    res('fast', 'b', 'B');
    res('slow', 'b', 'B');
    void r.done();
    const head = (t: string) => `TASK [${t}] ${'*'.repeat(80 - t.length - 8)}`;
    expect(out.text).toBe(
      [
        '',
        `PLAY [Deploy] ${'*'.repeat(66)}`,
        '',
        head('A'),
        'ok: [fast] A (0.1s)',
        '',
        head('B'),
        'progress: [fast] B: waiting',
        '',
        head('A'),
        'ok: [slow] A (0.1s)',
        '',
        head('B'),
        'ok: [fast] B (0.1s)',
        'ok: [slow] B (0.1s)',
        '',
      ].join('\n'),
    );
  });
});
