// vitest reporter: a suite must not go green by skipping. At the end of a run it lists every
// skipped test; under CI=true a skip that is not on the allow-list (test/ci-skips.ts, each entry
// with its reason) fails the run. Where a test-name filter (-t) or `.only` chose the tests, the
// skips are the user's choice and nothing is checked.
import { relative } from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';

export interface AllowedSkip {
  /** The test file, relative to the project root. */
  file: string;
  /** The test's full name (suites > test), or a pattern over it. */
  test: string | RegExp;
  /** Why this skip is expected on a CI machine set up by .ci/setup.sh. */
  reason: string;
}

export interface Skipped {
  file: string;
  test: string;
}

/** Which skips are allowed (with their entry) and which are not. */
export function sortSkips(skipped: readonly Skipped[], allowed: readonly AllowedSkip[]): { allowed: [Skipped, AllowedSkip][]; refused: Skipped[] } {
  const out: { allowed: [Skipped, AllowedSkip][]; refused: Skipped[] } = { allowed: [], refused: [] };
  for (const s of skipped) {
    const entry = allowed.find((a) => a.file === s.file && (typeof a.test === 'string' ? a.test === s.test : a.test.test(s.test)));
    if (entry) out.allowed.push([s, entry]);
    else out.refused.push(s);
  }
  return out;
}

export class SkipGuard implements Reporter {
  private ctx: Vitest | undefined;
  constructor(
    private readonly allowed: readonly AllowedSkip[],
    private readonly enforce = process.env.CI === 'true',
  ) {}

  onInit(ctx: Vitest): void {
    this.ctx = ctx;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const root = this.ctx?.config.root ?? process.cwd();
    const skipped: Skipped[] = [];
    let only = false;
    for (const m of testModules) {
      for (const t of m.children.allTests()) {
        if (t.options.mode === 'only') only = true;
        if (t.result().state === 'skipped') skipped.push({ file: relative(root, m.moduleId), test: t.fullName });
      }
    }
    if (skipped.length === 0) return;
    const filtered = this.ctx?.config.testNamePattern !== undefined || only;
    const { allowed, refused } = sortSkips(skipped, this.allowed);
    const lines = [`\nskipped tests (${skipped.length}):`];
    for (const [s, a] of allowed) lines.push(`  allowed  ${s.file} > ${s.test}\n           because ${a.reason}`);
    for (const s of refused) lines.push(`  ${this.enforce && !filtered ? 'REFUSED' : 'skipped'}  ${s.file} > ${s.test}`);
    process.stderr.write(`${lines.join('\n')}\n`);
    if (!this.enforce || refused.length === 0) return;
    if (filtered) {
      process.stderr.write('skip guard: a test-name filter or .only chose the tests; skips not checked\n');
      return;
    }
    process.stderr.write(
      `skip guard: ${refused.length} test(s) skipped under CI=true that test/ci-skips.ts does not allow: ` +
        'install what they need (.ci/setup.sh) or add them there with the reason\n',
    );
    process.exitCode = 1;
  }
}
