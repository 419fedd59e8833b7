// The skip guard (test/skip-guard.ts): under CI=true a vitest run whose tests skip fails unless
// each skip is allowed with a reason; the allowed ones are listed with their reasons. Checked on
// a small suite written to a temp dir and run by vitest itself, as CI runs the real one.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sortSkips } from '../skip-guard.js';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'tsbm-skip-guard-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

writeFileSync(
  join(dir, 'vitest.config.mjs'),
  `import { SkipGuard } from ${JSON.stringify(join(ROOT, 'test/skip-guard.ts'))};
export default {
  test: {
    include: ['*.check.ts'],
    globals: true,
    reporters: ['default', new SkipGuard([{ file: 'a.check.ts', test: 'suite > needs a kernel module', reason: 'the CI kernel has no such module' }])],
  },
};
`,
);
writeFileSync(join(dir, 'a.check.ts'), `describe('suite', () => { it('runs', () => {}); it.skip('needs a kernel module', () => {}); });\n`);
writeFileSync(join(dir, 'b.check.ts'), `it('runs', () => {}); it.skipIf(true)('needs a tool CI forgot to install', () => {});\n`);

function vitest(files: string[], env: Record<string, string | undefined>) {
  const r = spawnSync(join(ROOT, 'node_modules/.bin/vitest'), ['run', '--root', dir, '--config', join(dir, 'vitest.config.mjs'), ...files], {
    cwd: dir,
    env: { ...process.env, CI: undefined, ...env },
    encoding: 'utf8',
    timeout: 240_000,
  });
  return { code: r.status, err: r.stderr };
}

describe('the skip guard', () => {
  it('sorts skips by the allow-list: file and full name, or a pattern', () => {
    const allowed = [
      { file: 'a.test.ts', test: 'x > y', reason: 'r1' },
      { file: 'b.test.ts', test: /^kernel/, reason: 'r2' },
    ];
    const { allowed: ok, refused } = sortSkips(
      [
        { file: 'a.test.ts', test: 'x > y' },
        { file: 'a.test.ts', test: 'x > z' },
        { file: 'b.test.ts', test: 'kernel iso9660' },
        { file: 'c.test.ts', test: 'kernel iso9660' },
      ],
      allowed,
    );
    expect(ok.map(([s, a]) => `${s.file}:${a.reason}`)).toEqual(['a.test.ts:r1', 'b.test.ts:r2']);
    expect(refused).toEqual([
      { file: 'a.test.ts', test: 'x > z' },
      { file: 'c.test.ts', test: 'kernel iso9660' },
    ]);
  });

  it('under CI=true a skip not on the list fails the run, naming it; the allowed one is printed with its reason', () => {
    const r = vitest([], { CI: 'true' });
    expect(r.code, r.err).toBe(1);
    expect(r.err).toContain('REFUSED  b.check.ts > needs a tool CI forgot to install');
    expect(r.err).toMatch(/allowed {2}a\.check\.ts > suite > needs a kernel module\n\s+because the CI kernel has no such module/);
    expect(r.err).toMatch(/skip guard: 1 test\(s\) skipped under CI=true that test\/ci-skips\.ts does not allow/);
  }, 300_000);

  it('only allowed skips under CI=true, or any skip outside CI: the run passes and still lists them', () => {
    const allowedOnly = vitest(['a.check.ts'], { CI: 'true' });
    expect(allowedOnly.code, allowedOnly.err).toBe(0);
    expect(allowedOnly.err).toContain('because the CI kernel has no such module');
    const local = vitest([], {});
    expect(local.code, local.err).toBe(0);
    expect(local.err).toContain('skipped  b.check.ts > needs a tool CI forgot to install');
  }, 300_000);
});
