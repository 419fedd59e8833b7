// Arbitrary YAML and strings through the inventory loader, the playbook loader and
// `tsbm validate`: each input either loads or is refused with a TsbmError that points at
// file:line:col; nothing crashes the process. Bounded (200 runs per loader, 24 CLI processes).
// Templating, argv quoting and the ISO writer have their own fuzz tests (see test/FAULTS.md).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { collectValidationErrors } from '../../src/cli/validate-command.js';
import { TsbmError } from '../../src/errors.js';
import { loadInventories } from '../../src/inventory/load.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import { TSBM } from '../helpers/fault-cli.js';
import { flushFaultRows, recordFault } from '../helpers/fault-table.js';

const SOURCE = 'fuzz-loaders';
const RUNS = 200;
// One seed per suite run, shown in test/FAULTS.md; TSBM_FUZZ_SEED replays a failure.
const SEED = Number(process.env.TSBM_FUZZ_SEED) || Date.now() % 2 ** 31;
const dir = mkdtempSync(join(tmpdir(), 'tsbm-fuzz-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  flushFaultRows(SOURCE);
});

// Words the loaders care about, so generated documents get past the first "not a mapping" check.
const WORDS = [
  'all', 'hosts', 'vars', 'children', 'node01', 'web', 'ansible_host', 'ssh_port', 'tasks', 'name', 'debug', 'msg',
  'block', 'rescue', 'always', 'when', 'loop', 'register', 'roles', 'become', 'serial', 'gather_facts', 'shell',
  'command', 'set_fact', 'handlers', 'notify', 'until', 'retries', 'delay', 'tags', 'strategy', 'resume', 'x',
];
const key = fc.constantFrom(...WORDS);
const scalar = fc.oneof(
  fc.constantFrom('{{ x }}', '{{', '}}', '{{ x | nope }}', '', 'true', 'null', '0', '-1', '1e400', 'node[01:99]', 'rerun'),
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);
const tree = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    scalar,
    fc.dictionary(key, tie('node'), { maxKeys: 5 }),
    fc.array(tie('node'), { maxLength: 4 }),
  ),
})).node;
// YAML syntax fragments: anchors, aliases, merges, tags, flow collections, block scalars, directives.
const token = fc.constantFrom(
  '- ', ': ', '\n', '  ', '    ', '{', '}', '[', ']', ', ', '&a ', '*a', '<<: *a', '!!str ', '!!map ', '!foo ', '? ', '| ', '>-',
  '# c', '"', "'", '---\n', '...\n', '%YAML 1.2\n', '\t', '\r\n', '\u0000', '\ufeff', 'é', ...WORDS,
);
const soup = fc.array(token, { maxLength: 40 }).map((a) => a.join(''));

/** Inputs of three kinds, each tagged so the fault table can say what was tried. */
const inputs = (shape: 'inventory' | 'playbook') =>
  fc.oneof(
    soup.map((text) => ({ kind: 'YAML token soup', text })),
    fc.string({ maxLength: 300, unit: 'binary' }).map((text) => ({ kind: 'arbitrary strings', text })),
    (shape === 'playbook' ? fc.array(tree, { maxLength: 3 }) : tree).map((v) => ({ kind: 'YAML of generated trees', text: stringify(v) })),
  );

type Outcome = 'loaded' | 'refused';

/** Runs a loader; a refusal must be a TsbmError pointing into the file. Anything else fails the property. */
function check(file: string, load: () => unknown): Outcome {
  try {
    load();
    return 'loaded';
  } catch (e) {
    if (!(e instanceof TsbmError)) throw new Error(`crashed with ${(e as Error)?.stack ?? String(e)}`);
    expectPositioned(e, file);
    return 'refused';
  }
}

function expectPositioned(e: TsbmError, file: string): void {
  if (!e.pos) throw new Error(`refused without a position: ${e.message}`);
  expect(resolve(e.pos.file), e.message).toBe(resolve(file));
  expect(e.pos.line, e.message).toBeGreaterThanOrEqual(1);
  expect(e.pos.col, e.message).toBeGreaterThanOrEqual(1);
}

function tally(loader: string, counts: Map<string, Record<Outcome, number>>): void {
  for (const [kind, c] of [...counts].sort(([a], [b]) => a.localeCompare(b))) {
    recordFault(SOURCE, {
      fault: `${kind} -> ${loader}`,
      how: `fast-check, seed ${SEED}`,
      cases: c.loaded + c.refused,
      outcome: `${c.loaded} loaded, ${c.refused} refused with a positioned TsbmError, 0 crashes`,
      result: 'pass',
    });
  }
}

function fuzzLoader(name: string, shape: 'inventory' | 'playbook', load: (file: string) => unknown) {
  const counts = new Map<string, Record<Outcome, number>>();
  let n = 0;
  fc.assert(
    fc.property(inputs(shape), ({ kind, text }) => {
      const file = join(dir, `${shape}-${n++}.yml`);
      writeFileSync(file, text);
      const c = counts.get(kind) ?? { loaded: 0, refused: 0 };
      c[check(file, () => load(file))]++;
      counts.set(kind, c);
    }),
    { numRuns: RUNS, seed: SEED },
  );
  tally(name, counts);
}

describe('fuzz: loaders never crash', () => {
  it('loadInventories: loads or refuses with file:line:col', () => {
    fuzzLoader('loadInventories', 'inventory', (f) => loadInventories([f]));
  }, 60_000);

  it('loadPlaybook: loads or refuses with file:line:col', () => {
    fuzzLoader('loadPlaybook', 'playbook', (f) => loadPlaybook(f));
  }, 60_000);

  it('validate (in process): collects positioned TsbmErrors, never throws', async () => {
    const counts = new Map<string, Record<Outcome, number>>();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(inputs('playbook'), async ({ kind, text }) => {
        const file = join(dir, `validate-${n++}.yml`);
        writeFileSync(file, text);
        const errors = await collectValidationErrors([file], {});
        for (const e of errors) {
          expect(e).toBeInstanceOf(TsbmError);
          expectPositioned(e, file);
        }
        const c = counts.get(kind) ?? { loaded: 0, refused: 0 };
        c[errors.length ? 'refused' : 'loaded']++;
        counts.set(kind, c);
      }),
      { numRuns: RUNS, timeout: 5_000, seed: SEED },
    );
    tally('tsbm validate (in process)', counts);
  }, 60_000);

  it('tsbm validate (the CLI): exit 0 or 4, JSON errors with file:line:col, no stack trace', async () => {
    const cases = fc.sample(inputs('playbook'), { numRuns: 24, seed: SEED });
    const run = promisify(execFile);
    let loaded = 0;
    let refused = 0;
    for (let i = 0; i < cases.length; i += 6) {
      const batch = cases.slice(i, i + 6).map(async ({ text }, j) => {
        const file = join(dir, `cli-${i + j}.yml`);
        writeFileSync(file, text);
        const r = await run(process.execPath, [TSBM, 'validate', file, '--output', 'json'], { timeout: 20_000 }).then(
          (x) => ({ code: 0, stdout: x.stdout, stderr: x.stderr }),
          (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
        );
        expect([0, 4], `${r.code}: ${r.stderr}\n--- input:\n${text}`).toContain(r.code);
        expect(r.stderr).not.toMatch(/\n\s+at /);
        const out = JSON.parse(r.stdout) as { ok: boolean; errors: { file: string | null; line: number | null; col: number | null }[] };
        for (const e of out.errors) {
          expect(e.file).not.toBeNull();
          expect(e.line).toBeGreaterThanOrEqual(1);
          expect(e.col).toBeGreaterThanOrEqual(1);
        }
        if (out.ok) loaded++;
        else refused++;
      });
      await Promise.all(batch);
    }
    recordFault(SOURCE, {
      fault: 'token soup, strings, generated trees -> `tsbm validate --output json` process',
      how: `fast-check sample, seed ${SEED}, 6 processes at a time`,
      cases: cases.length,
      outcome: `${loaded} valid, ${refused} refused (exit 4, positioned JSON errors), 0 crashes`,
      result: 'pass',
    });
  }, 120_000);
});
