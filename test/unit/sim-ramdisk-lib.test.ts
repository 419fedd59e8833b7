// The simulated ramdisk tools' shared shell library (packages/lab/ramdisk/bin/lib.sh), run by the
// machine's /bin/sh as the tools run it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const LIB = resolve(import.meta.dirname, '../../packages/lab/ramdisk/bin/lib.sh');
const root = mkdtempSync(join(tmpdir(), 'tsbm-simlib-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** What sim_key makes of each input, one per line. */
function simKeys(inputs: string[]): string[] {
  const script = `. "$1"; shift; for r in "$@"; do sim_key "$r"; printf '[%s]\\n' "$KEY"; done`;
  const out = execFileSync('/bin/sh', ['-c', script, 'sh', LIB, ...inputs], { env: { PATH: process.env.PATH ?? '', TSBM_SIM_ROOT: root } });
  return out.toString().trimEnd().split('\n');
}

describe('sim_key (image reference to catalogue file name)', () => {
  it('turns every / : @ into _ and keeps everything else, at the ends and doubled too', () => {
    const cases: [string, string][] = [
      ['registry.sim.tsbm:5000/tsbm/bootc-demo:latest', 'registry.sim.tsbm_5000_tsbm_bootc-demo_latest'],
      ['localhost/x@sha256:ab', 'localhost_x_sha256_ab'],
      ['a//b', 'a__b'],
      ['/a', '_a'],
      ['a/', 'a_'],
      ['a:', 'a_'],
      ['x', 'x'],
      ['', ''],
      ['a b/*', 'a b_*'], // no word splitting on spaces, no globbing
    ];
    expect(simKeys(cases.map(([i]) => i))).toEqual(cases.map(([, o]) => `[${o}]`));
  });
});
