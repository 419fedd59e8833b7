// A run refused by its checks shows the same problems in every output mode: plain and TTY print
// `tsbm validate`'s line for each, JSON has one schema-valid event each, JUnit one failed
// testcase each.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, describe, expect, it } from 'vitest';
import { eventSchema } from '../../src/output/event-schema.js';
import { EventBus, type TsbmEvent } from '../../src/output/events.js';
import { attachJUnit } from '../../src/output/junit.js';
import { attach as attachJson } from '../../src/output/renderers/json.js';
import { attach as attachPlain } from '../../src/output/renderers/plain.js';
import { attach as attachTty } from '../../src/output/renderers/tty.js';
import { MemoryStream, T0 } from './output-sequence.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-verr-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const EVENTS: TsbmEvent[] = [
  {
    type: 'validation_error',
    time: T0,
    message: 'template syntax error: {{#if}} is never closed',
    hint: 'end the block with {{/if}}',
    pos: { file: 'site.yml', line: 11, col: 14 },
  },
  {
    type: 'validation_error',
    time: T0,
    message: 'undefined variable "info.boot_iso" in task "Third" for hosts alpha, beta',
    hint: 'give "info.boot_iso" a value for these hosts',
    pos: { file: 'site.yml', line: 20, col: 14 },
    hosts: ['alpha', 'beta'],
  },
  { type: 'validation_error', time: T0, message: 'inventory inv.yml not found', hint: 'check the -i path' },
  { type: 'run_end', time: T0 + 5, exitCode: 4, durationMs: 5 },
];
const LINES = [
  'site.yml:11:14: template syntax error: {{#if}} is never closed (end the block with {{/if}})',
  'site.yml:20:14: undefined variable "info.boot_iso" in task "Third" for hosts alpha, beta (give "info.boot_iso" a value for these hosts)',
  'inventory inv.yml not found (check the -i path)',
];

async function render(kind: 'plain' | 'tty' | 'json'): Promise<string> {
  const bus = new EventBus();
  const out = new MemoryStream({ columns: 400, rows: 40 });
  const attach = kind === 'plain' ? attachPlain : kind === 'tty' ? attachTty : attachJson;
  const r = attach(bus, { stream: out.asStream(), verbosity: 0, color: false });
  for (const e of EVENTS) bus.emit(e);
  await r.done();
  return out.text;
}

describe('validation_error in every output mode', () => {
  it('plain prints validate\'s line for each', async () => {
    expect((await render('plain')).trimEnd().split('\n')).toEqual(LINES);
  });

  it('the TTY prints the same lines', async () => {
    const Columns = Object.getOwnPropertyDescriptor(process.stdout, 'columns');
    Object.defineProperty(process.stdout, 'columns', { value: 400, configurable: true, writable: true });
    try {
      const text = (await render('tty')).replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
      const shown = text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
      expect(shown).toEqual(LINES);
    } finally {
      if (Columns) Object.defineProperty(process.stdout, 'columns', Columns);
      else Reflect.deleteProperty(process.stdout, 'columns');
    }
  });

  it('JSON has one event per problem, valid against the published schema', async () => {
    const validate = new Ajv({ strict: false }).compile(eventSchema);
    const lines = (await render('json')).trimEnd().split('\n').map((l) => JSON.parse(l) as TsbmEvent);
    for (const l of lines) expect(validate(l), JSON.stringify(validate.errors)).toBe(true);
    expect(lines.filter((l) => l.type === 'validation_error')).toHaveLength(3);
    expect(lines[1]).toMatchObject({ pos: { file: 'site.yml', line: 20, col: 14 }, hosts: ['alpha', 'beta'] });
    expect(lines.at(-1)).toMatchObject({ type: 'run_end', exitCode: 4 });
  });

  it('JUnit has one failed testcase per problem, its failure the same line', async () => {
    const file = join(dir, 'j.xml');
    const bus = new EventBus();
    const j = attachJUnit(bus, file);
    for (const e of EVENTS) bus.emit(e);
    await j.done();
    const xml = readFileSync(file, 'utf8');
    expect(xml).toMatch(/<testsuites name="tsbm" tests="3" failures="3"/);
    const failures = [...xml.matchAll(/<failure message="([^"]*)" type="failed">/g)].map((m) =>
      m[1]!.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'),
    );
    expect(failures).toEqual(LINES);
    expect(xml).toContain('<testcase name="site.yml:11:14: template syntax error: {{#if}} is never closed"');
  });
});
