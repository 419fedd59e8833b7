// The README is for users: under 250 lines, the two commands first, the sections a user looks
// for, and a short performance table whose every figure carries its date (history lives in
// docs/performance.md, which the README links).
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const sections = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);

describe('README', () => {
  it('is under 250 lines', () => {
    expect(readme.split('\n').length).toBeLessThan(250);
  });

  it('starts with what tsbm is, then the two commands', () => {
    expect(sections[0]).toBe('Two commands');
    expect(readme.indexOf('```sh')).toBeGreaterThan(readme.indexOf('## Two commands'));
    expect(readme.slice(0, readme.indexOf('## Two commands'))).toMatch(/playbook runner/);
  });

  it('has the sections a user looks for', () => {
    for (const s of [/^What a deploy does$/, /^Commands$/, /^Inventories/, /^Secrets$/, /^Reports/, /^CI$/, /^Performance$/]) {
      expect(sections.some((x) => s.test(x)), String(s)).toBe(true);
    }
  });

  it('has a short performance table, each figure dated, and the history elsewhere', () => {
    const perf = readme.slice(readme.indexOf('## Performance'), readme.indexOf('\n## ', readme.indexOf('## Performance') + 1));
    const rows = perf.split('\n').filter((l) => l.startsWith('| `bench'));
    expect(rows.length).toBeGreaterThan(3);
    expect(rows.length).toBeLessThan(10);
    for (const r of rows) expect(r, r).toMatch(/\(\d{4}-\d{2}-\d{2}\) \|$/);
    expect(perf).toContain('docs/performance.md');
    expect(existsSync(join(ROOT, 'docs/performance.md'))).toBe(true);
    expect(readFileSync(join(ROOT, 'docs/performance.md'), 'utf8')).toMatch(/422 s/);
  });
});
