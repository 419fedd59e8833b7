// The commands the README and the CI docs give run the checkout's own build: `npx tsbm` (or
// `npm exec tsbm` without --offline) installs the checkout into npm's cache and runs `prepare`
// again, minutes on a busy machine and a network round-trip, in every fresh CI container.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const DOCS = ['README.md', 'docs/ci.md', 'docs/playbooks.md'];

/** Lines inside fenced code blocks and inline code spans of a Markdown file, with line numbers. */
function commandsOf(text: string): { line: number; code: string; fenced: boolean }[] {
  const out: { line: number; code: string; fenced: boolean }[] = [];
  let fenced = false;
  text.split('\n').forEach((l, i) => {
    if (/^\s*```/.test(l)) {
      fenced = !fenced;
      return;
    }
    if (fenced) out.push({ line: i + 1, code: l, fenced });
    else for (const m of l.matchAll(/`([^`]+)`/g)) out.push({ line: i + 1, code: m[1]!, fenced });
  });
  return out;
}

/** A command that would have npm install and rebuild the checkout before tsbm starts. */
const rebuilds = (code: string) => /(^|[\s;&|(])npx\s+(--?\S+\s+)*tsbm\b/.test(code) || /\bnpm\s+exec\s+(?![^|;&]*--offline)[^|;&]*\btsbm\b/.test(code);

describe('docs commands start the built checkout', () => {
  it.each(DOCS)('%s runs tsbm without npx', (file) => {
    const bad = commandsOf(readFileSync(join(ROOT, file), 'utf8'))
      // Prose that says not to use npx is quoted in backticks too: only commands that run it count.
      .filter((c) => rebuilds(c.code) && c.code.trim() !== 'npx tsbm')
      .map((c) => `${file}:${c.line}: ${c.code.trim()}`);
    expect(bad).toEqual([]);
  });

  it("the README's first command is npm ci then the checkout's bin", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const first = block.split('\n').find((l) => l.trim() && !l.trim().startsWith('#'));
    expect(first?.trim()).toBe('npm ci && node bin/tsbm.js run playbooks/deploy-bootc.yml -i inventory-examples/sim.yml');
  });

  it("every tsbm command in the CI docs' pipelines runs node bin/tsbm.js", () => {
    const ci = readFileSync(join(ROOT, 'docs/ci.md'), 'utf8');
    const lines = commandsOf(ci).filter((c) => c.fenced && /\btsbm(\.js)?\s+(run|validate|nodes|runs)\b/.test(c.code));
    expect(lines.length).toBeGreaterThan(5);
    for (const l of lines) expect(l.code).toMatch(/node bin\/tsbm\.js (run|validate|nodes|runs)\b/);
  });

  it('the check itself catches the forms that rebuild', () => {
    expect(rebuilds('npm ci && npx tsbm run x')).toBe(true);
    expect(rebuilds('- run: npx --yes tsbm validate x')).toBe(true);
    expect(rebuilds('npm exec tsbm -- run x')).toBe(true);
    expect(rebuilds('npm exec --offline -- tsbm run x')).toBe(false);
    expect(rebuilds('node bin/tsbm.js run x')).toBe(false);
  });
});
