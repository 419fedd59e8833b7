// `tsbm sim up --help` lists every fault the lab's --faults parser takes, and each as it is
// written there parses.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseFaultSpec } from '../../packages/lab/src/lab/faults.js';
import { FAULTS } from '../../src/inventory/sim-faults.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const SAMPLE: Record<string, string> = { RATE: '0.5', MS: '200', N: '2', 'MS|MIN-MAX': '100-300' };

describe('the lab faults in sim up --help', () => {
  it("names every fault the parser takes (its switch's cases)", () => {
    const source = readFileSync(join(ROOT, 'packages/lab/src/lab/faults.ts'), 'utf8');
    const cases = [...source.matchAll(/case '([a-z_0-9]+)':/g)].map((m) => m[1]);
    expect(cases.length).toBeGreaterThan(10);
    expect(FAULTS.map((f) => f.name).sort()).toEqual([...cases].sort());
  });

  it('each fault, with a value of the form shown, parses', () => {
    for (const f of FAULTS) {
      const item = f.value ? `${f.name}=${SAMPLE[f.value]}` : f.name;
      expect(() => parseFaultSpec(`node01:${item}`), item).not.toThrow();
    }
    expect(() => parseFaultSpec('node01:nope')).toThrow(new RegExp(`known: ${FAULTS.map((f) => f.name).join(', ')}`));
  });

  it.skipIf(!existsSync(join(ROOT, 'dist/cli/main.js')))('tsbm sim up --help prints them', () => {
    const help = execFileSync(process.execPath, [join(ROOT, 'bin/tsbm.js'), 'sim', 'up', '--help'], { encoding: 'utf8', env: { PATH: process.env.PATH, NO_COLOR: '1' } });
    for (const f of FAULTS) expect(help).toMatch(new RegExp(`^  ${f.name}${f.value ? `=${f.value.replace('|', '\\|')}` : ''}\\s+${f.does.replace(/[()|.*+?^$[\]\\]/g, '\\$&')}$`, 'm'));
  });
});

