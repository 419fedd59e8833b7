// The simulated lab's directory is its owner's only (0700) and its inventory, which carries the
// lab's BMC and registry passwords, is 0600, also where an earlier lab left looser modes.
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { makeLabDir } from '../../packages/lab/src/lab/private-dir.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();
const labs: Lab[] = [];
afterEach(async () => {
  for (const l of labs.splice(0)) await l.close();
});

const mode = (p: string) => statSync(p).mode & 0o777;

describe('simulated lab file modes', () => {
  it('a new lab directory is 0700, its inventory and controller key 0600', async () => {
    const dir = join(scratch('tsbm-labmode-'), 'lab');
    const lab = await startLab({ nodes: 1, dir, bootDelayMs: 0, powerDelayMs: 0 });
    labs.push(lab);
    expect(mode(dir)).toBe(0o700);
    expect(mode(lab.inventory)).toBe(0o600);
    expect(mode(join(dir, 'controller_ed25519'))).toBe(0o600);
  });

  it('a lab directory an earlier lab left 0755, with a 0644 inventory, is tightened', async () => {
    const dir = scratch('tsbm-labmode-');
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'inventory.yml'), 'old: {}\n', { mode: 0o644 });
    chmodSync(join(dir, 'inventory.yml'), 0o644);
    const lab = await startLab({ nodes: 1, dir, bootDelayMs: 0, powerDelayMs: 0 });
    labs.push(lab);
    expect(mode(dir)).toBe(0o700);
    expect(mode(lab.inventory)).toBe(0o600);
  });

  it('a directory that holds other things too, or a shared sticky one, keeps its mode', () => {
    const mixed = scratch('tsbm-labmode-');
    chmodSync(mixed, 0o755);
    writeFileSync(join(mixed, 'notes.txt'), 'mine');
    makeLabDir(mixed);
    expect(mode(mixed)).toBe(0o755);
    const sticky = join(scratch('tsbm-labmode-'), 'shared');
    mkdirSync(sticky);
    chmodSync(sticky, 0o1777);
    makeLabDir(sticky);
    expect(statSync(sticky).mode & 0o7777).toBe(0o1777);
  });
});
