// deploy-anaconda.yml runs each node at its own pace (strategy: free) on the simulated lab: one
// node's BMC takes seconds for every power change, the other's answers at once. The fast node
// installs and boots its disk while the slow one is still powering on; then the slow one installs
// too. Shown by the order of the events, not by wall-clock thresholds: under linear, no node
// starts waiting for its installer before every node was powered on.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TsbmEvent } from '../../src/output/events.js';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { resultsOf, runEvents } from '../helpers/run-events.js';
import { scratchDirs } from '../helpers/scratch.js';

const PLAYBOOK = path.resolve(import.meta.dirname, '../../playbooks/deploy-anaconda.yml');
const POWER_ON = 'Power the node on';
const WAIT = 'Wait for the installer';
const LAST = 'Power cycle into the installed system';
const scratch = scratchDirs();

let lab: Lab;

beforeAll(async () => {
  // node02's BMC takes 4 s for each power change (on, the installer's power-off, the cycle).
  lab = await startLab({ nodes: 2, dir: path.join(scratch('tsbm-anaconda-pace-'), 'lab'), bootDelayMs: 200, powerDelayMs: 50, faults: 'node02:power_delay=4000' });
}, 60_000);

afterAll(async () => {
  await lab?.close();
});

/** The index in the event stream of `host`'s result of `task` (-1: none). */
function at(events: readonly TsbmEvent[], host: string, task: string): number {
  return events.findIndex((e) => e.type === 'host_result' && e.host === host && e.task === task);
}

describe('deploy-anaconda.yml: each node at its own pace', () => {
  it('a node whose BMC powers on slowly holds no other node up: the fast node installs and boots its disk first', async () => {
    const { code, events } = await runEvents({ playbook: PLAYBOOK, inventories: [lab.inventory], forks: 10 });
    expect(code, JSON.stringify(resultsOf(events, WAIT))).toBe(0);
    for (const task of [POWER_ON, WAIT, LAST]) {
      for (const host of ['node01', 'node02']) expect(at(events, host, task), `${host} ${task}`).toBeGreaterThanOrEqual(0);
    }
    // node01 was installed, its media ejected and its disk booted before node02's BMC had even
    // finished powering node02 on (linear would hold node01 at every one of those steps).
    expect(at(events, 'node01', WAIT)).toBeLessThan(at(events, 'node02', POWER_ON));
    expect(at(events, 'node01', LAST)).toBeLessThan(at(events, 'node02', POWER_ON));
    const play = events.find((e) => e.type === 'play_start');
    expect(play?.type === 'play_start' && play.strategy).toBe('free');
    // ... and node02 still installed, at its own pace.
    expect(resultsOf(events, WAIT).node02?.status).toBe('changed');
    for (const n of lab.nodes) {
      expect(JSON.parse(readFileSync(path.join(n.root, 'sim', 'installed.json'), 'utf8'))).toMatchObject({ result: 'installed', end: 'poweroff' });
      expect(n.bmc!.state.boot).toMatchObject({ BootSourceOverrideTarget: 'Hdd', BootSourceOverrideEnabled: 'Continuous' });
    }
  }, 180_000);
});
