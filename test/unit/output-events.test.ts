import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { eventSchema } from '../../src/output/event-schema.js';
import { EventBus, type TsbmEvent } from '../../src/output/events.js';
import { MASK, Redactor } from '../../src/output/redact.js';
import { attach as attachJson } from '../../src/output/renderers/json.js';
import { MemoryStream, sampleRun } from './output-sequence.js';

describe('EventBus redaction at the source', () => {
  it('masks registered secrets and secret-named keys before any listener sees the event', () => {
    const redactor = new Redactor();
    redactor.add('hunter2-secret-value');
    const bus = new EventBus(redactor);
    const seen: TsbmEvent[] = [];
    bus.on((e) => seen.push(e));
    bus.emit({
      type: 'host_result',
      time: 1,
      host: 'n1',
      task: 'login',
      taskId: 't',
      status: 'failed',
      changed: false,
      msg: 'auth with hunter2-secret-value failed',
      result: { redfish_password: 'pw-not-registered', nested: { v: 'x hunter2-secret-value y' } },
      durationMs: 1,
    });
    bus.emit({ type: 'host_task_start', time: 1, host: 'n1', task: 'login', taskId: 't', args: { token: 'tok-123', user: 'admin' } });
    const text = JSON.stringify(seen);
    expect(text).not.toContain('hunter2-secret-value');
    expect(text).not.toContain('pw-not-registered');
    expect(text).not.toContain('tok-123');
    expect(text).toContain(MASK);
    expect(text).toContain('admin');
  });

  it('also redacts what the JSON renderer writes (it only sees bus events)', () => {
    const redactor = new Redactor();
    redactor.add('s3cr3t-pull');
    const bus = new EventBus(redactor);
    const out = new MemoryStream();
    attachJson(bus, { stream: out.asStream(), verbosity: 0 });
    bus.emit({ type: 'log', time: 1, level: 2, message: 'podman pull --creds u:s3cr3t-pull x' });
    expect(out.text).not.toContain('s3cr3t-pull');
  });

  it('keeps going when a listener throws', () => {
    const bus = new EventBus();
    const seen: string[] = [];
    bus.on(() => {
      throw new Error('broken renderer');
    });
    bus.on((e) => seen.push(e.type));
    bus.emit({ type: 'warning', time: 1, message: 'x' });
    expect(seen).toEqual(['warning']);
  });
});

describe('event schema', () => {
  const validate = new Ajv({ strict: false }).compile(eventSchema);

  it('has the published $id and one variant per event type', () => {
    expect(eventSchema.$id).toBe('https://tsbm.dev/schemas/events.json');
    const types = eventSchema.anyOf.map((s) => s.properties.type.const).sort();
    expect(types).toEqual(
      ['host_result', 'host_task_start', 'log', 'play_start', 'progress', 'recap', 'resume', 'retry', 'run_end', 'run_start', 'task_start', 'validation_error', 'warning'],
    );
  });

  it('accepts every line the JSON renderer writes for a whole run', () => {
    const bus = new EventBus();
    const out = new MemoryStream();
    attachJson(bus, { stream: out.asStream(), verbosity: 0 });
    for (const e of sampleRun()) bus.emit(e);
    const lines = out.text.trimEnd().split('\n');
    expect(lines).toHaveLength(sampleRun().length);
    for (const line of lines) {
      const parsed: unknown = JSON.parse(line);
      expect(validate(parsed), JSON.stringify(validate.errors)).toBe(true);
    }
  });

  it('rejects events that do not match (wrong status, missing field)', () => {
    expect(validate({ type: 'host_result', time: 1, host: 'h', task: 't', taskId: 'x', status: 'great', changed: false, durationMs: 1 })).toBe(false);
    expect(validate({ type: 'run_end', time: 1, exitCode: 0 })).toBe(false);
    expect(validate({ type: 'nope', time: 1 })).toBe(false);
  });
});
