// Arbitrary YAML and strings through the inventory loader, the playbook loader and the checks
// behind `tsbm validate`, in process: each input either loads or is refused with a TsbmError
// pointing at file:line:col; nothing crashes. Bounded (200 runs each). The CLI process is
// fuzzed in test/integration/faults-validate-fuzz.test.ts.
// Templating, argv quoting and the ISO writer have their own fuzz tests (see the fault table, npm run faults).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { collectValidationErrors } from '../../src/cli/validate-command.js';
import { TsbmError } from '../../src/errors.js';
import { loadInventories } from '../../src/inventory/load.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import { flushFaultRows, recordFault } from '../helpers/fault-table.js';
import { FUZZ_SEED, inputs } from '../helpers/fuzz-inputs.js';

const SOURCE = 'fuzz-loaders';
const RUNS = 200;
const SEED = FUZZ_SEED;
const dir = mkdtempSync(join(tmpdir(), 'tsbm-fuzz-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  flushFaultRows(SOURCE);
});

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

});
