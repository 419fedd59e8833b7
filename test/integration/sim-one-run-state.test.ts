// README's first command, twice in a row: a `tsbm_sim` inventory starts a lab for one run, so
// its nodes (fake BMCs on ports of that run) are gone when the run ends. Their locks and
// records live with the run, not in the operator's node store: a second run deploys again
// (nothing there says "active"), and `tsbm nodes list` holds no machine that no longer exists
// (a later lab's node on a port one of them had would otherwise be taken for it and refused).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPLOY, ROOT, runTsbm, stateArgs } from '../helpers/fault-cli.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tsbm-first-twice-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the first command, run twice', () => {
  it('deploys both times; the operator\'s node store keeps no record of the one-run lab', async () => {
    const state = stateArgs(dir);
    const inventory = join(ROOT, 'inventory-examples', 'sim.yml');
    for (const attempt of [1, 2]) {
      const r = await runTsbm(['run', DEPLOY, '-i', inventory, '--output', 'json', ...state.args], { cwd: dir, env: state.env, timeoutMs: 240_000 });
      expect(r.code, `run ${attempt}: ${r.stderr}`).toBe(0);
      const recap = r.events.find((e) => e.type === 'recap') as { hosts?: Record<string, { outcome: string; node?: { state: string } }> } | undefined;
      // Within the run the nodes moved as any other (the recap reports them active).
      expect(Object.values(recap?.hosts ?? {}).map((h) => [h.outcome, h.node?.state])).toEqual([
        ['ok', 'active'],
        ['ok', 'active'],
        ['ok', 'active'],
      ]);
    }
    const list = await runTsbm(['nodes', 'list', '--output', 'json'], { cwd: dir, env: state.env });
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([]);
  }, 500_000);
});
