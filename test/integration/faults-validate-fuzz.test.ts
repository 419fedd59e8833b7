// Fuzzed playbooks through `tsbm validate --output json` as a real process: exit 0 or 4, every
// error positioned (file:line:col), no stack trace. 24 generated inputs, 6 processes at a time;
// the in-process loaders get 200 runs each in test/unit/fuzz-loaders.test.ts.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { TSBM } from '../helpers/fault-cli.js';
import { flushFaultRows, recordFault } from '../helpers/fault-table.js';
import { FUZZ_SEED, inputs } from '../helpers/fuzz-inputs.js';

const SOURCE = 'faults-validate-fuzz';
const SEED = FUZZ_SEED;
const dir = mkdtempSync(join(tmpdir(), 'tsbm-fuzzcli-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  flushFaultRows(SOURCE);
});

describe('fuzz: tsbm validate never crashes', () => {
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
