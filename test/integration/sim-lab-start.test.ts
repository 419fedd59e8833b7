// `tsbm sim up` when the lab cannot finish starting: the reason reaches the operator at once and
// no half-started lab is left running.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratchDirs } from '../helpers/scratch.js';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/tsbm.js');
const scratch = scratchDirs();

describe('sim up', () => {
  it('reports a start failure with its cause, quickly, and leaves no lab process behind', () => {
    const dir = scratch('tsbm-labstart-');
    // 80 descriptors run out a few nodes in (each has a disk file, three listeners and keys).
    const r = spawnSync('sh', ['-c', `ulimit -n 80 && exec "${process.execPath}" "${bin}" sim up --nodes 30 --dir "${dir}"`], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^tsbm: error: the simulated lab failed to start: EMFILE: too many open files.*\(see .*lab\.log\)\n$/);
    expect(existsSync(join(dir, 'lab.json'))).toBe(false);
    expect(readFileSync(join(dir, 'lab.log'), 'utf8')).toMatch(/EMFILE/);
    // Gone within its grace period (the lab process is detached: find it by its directory).
    const deadline = Date.now() + 5000;
    let alive = '';
    do {
      alive = spawnSync('pgrep', ['-f', `serve-main.js ${dir}`], { encoding: 'utf8' }).stdout.trim();
    } while (alive && Date.now() < deadline && !spawnSync('sleep', ['0.2']).error);
    expect(alive).toBe('');
  });

  it('in a directory with a space: the next command it prints quotes the inventory, so it can be pasted', () => {
    const dir = join(scratch('tsbm-labstart-'), 'my lab');
    const up = spawnSync(process.execPath, [bin, 'sim', 'up', '--nodes', '1', '--dir', dir], { encoding: 'utf8', timeout: 60_000 });
    try {
      expect(up.status, up.stderr).toBe(0);
      expect(up.stdout).toContain(`next: tsbm run playbooks/deploy-bootc.yml -i '${dir}/inventory.yml'\n`);
    } finally {
      spawnSync(process.execPath, [bin, 'sim', 'down', '--dir', dir], { encoding: 'utf8', timeout: 60_000 });
    }
  });
});
