// The bad-input corpus: every file under test/fixtures/bad/ run through the built CLI
// (`node bin/tsbm.js validate`), asserting the exact file:line:col and message, exit code 4
// and that no stack trace leaks. Expectations live in test/fixtures/bad/expect.json.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const BAD = 'test/fixtures/bad';
const INVENTORY = `${BAD}/inventory.yml`;

interface Expectation {
  file: string;
  line: number;
  col: number;
  message: string;
}
const expectations = JSON.parse(readFileSync(join(ROOT, BAD, 'expect.json'), 'utf8')) as Record<
  string,
  Expectation
>;

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

async function tsbm(...args: string[]): Promise<CliResult> {
  try {
    const r = await run('node', ['bin/tsbm.js', ...args], { cwd: ROOT, timeout: 90_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof err.code === 'number' ? err.code : -1,
      stdout: err.stdout ?? '',
      stderr: err.stderr ?? '',
    };
  }
}

function noStack(r: CliResult): void {
  expect(`${r.stdout}\n${r.stderr}`).not.toMatch(/^\s+at /m);
}

beforeAll(async () => {
  // `npm test` builds first; a bare `npx vitest run` of this file builds when dist/ is missing
  // (the full build: the corpus checks the messages of the validators compiled at build time).
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js'))) {
    await run('npm', ['run', 'build'], { cwd: ROOT }).catch(() => undefined);
  }
}, 120_000);

describe('validate: bad-input corpus', () => {
  it('has at least 40 bad inputs, each with an expectation', () => {
    const files = readdirSync(join(ROOT, BAD)).filter((f) => f.endsWith('.yml') && f !== 'inventory.yml');
    expect(files.length).toBeGreaterThanOrEqual(40);
    expect(files.sort()).toEqual(Object.keys(expectations).sort());
  });

  // Every case is its own CLI process (own exit code); they run 12 at a time up front.
  const results = new Map<string, CliResult>();
  beforeAll(async () => {
    const queue = Object.keys(expectations);
    const worker = async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
        results.set(name, await tsbm('validate', `${BAD}/${name}`, '-i', INVENTORY));
      }
    };
    await Promise.all(Array.from({ length: 12 }, worker));
  }, 300_000);

  it.each(Object.entries(expectations))('%s', (name, exp) => {
    const r = results.get(name)!;
    expect(r.code).toBe(4);
    const first = r.stdout.split('\n')[0]!;
    const head = `${exp.file}:${exp.line}:${exp.col}: ${exp.message}`;
    // The line is exactly the expectation, optionally followed by a hint in parentheses.
    expect(first.slice(0, head.length)).toBe(head);
    expect(first.slice(head.length)).toMatch(/^(| \(.*\))$/);
    noStack(r);
  });
});

describe('validate: absurd sizes', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-validate-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('survives absurdly deep nesting with a positioned error, not a crash', async () => {
    const file = join(dir, 'deep.yml');
    writeFileSync(file, `- hosts: all\n  vars:\n    x: ${'['.repeat(20000)}${']'.repeat(20000)}\n  tasks: []\n`);
    const r = await tsbm('validate', file);
    expect(r.code).toBe(4);
    expect(r.stdout).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3:\\d+: YAML syntax error`));
    noStack(r);
  });

  it('refuses a playbook larger than 16 MiB without reading it as YAML', async () => {
    const file = join(dir, 'huge.yml');
    writeFileSync(file, `- hosts: all\n  vars:\n    pad: "${'x'.repeat(17 * 1024 * 1024)}"\n`);
    const r = await tsbm('validate', file);
    expect(r.code).toBe(4);
    expect(r.stdout).toContain(`${file} is larger than 16 MiB`);
    noStack(r);
  });
});
