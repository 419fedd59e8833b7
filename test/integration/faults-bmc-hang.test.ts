// A hung BMC (answers far slower than the request timeout): each request times out, bounded
// retries, then that host fails with the timeout; the healthy node's power task completes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { failuresOf, runTsbm, stateArgs } from '../helpers/fault-cli.js';
import { flushFaultRows, tryFault } from '../helpers/fault-table.js';

const SOURCE = 'faults-bmc-hang';
let lab: Lab | undefined;
let dir = '';
afterAll(async () => {
  await lab?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  flushFaultRows(SOURCE);
});

describe('hung BMC', () => {
  it('times out per request, retries a bounded number of times, fails only that host', async () => {
    await tryFault(
      SOURCE,
      { fault: 'BMC hangs', how: 'sim bmc_latency=8000 vs request_timeout 1 s, request_retries 2', cases: 1, outcome: 'host failed naming the timeout after 3 attempts, well before the latency; healthy node powered off' },
      async () => {
        dir = mkdtempSync(join(tmpdir(), 'tsbm-bmchang-'));
        lab = await startLab({ nodes: 2, dir, bootDelayMs: 150, powerDelayMs: 30, faults: 'node02:bmc_latency=8000' });
        const playbook = join(dir, 'off.yml');
        writeFileSync(
          playbook,
          '- hosts: all\n  tasks:\n    - name: Power off\n      redfish_power:\n        state: "off"\n        wait: true\n        request_timeout: 1\n        request_retries: 2\n        retry_max_delay: 0.2\n',
        );
        const state = stateArgs(dir);
        const r = await runTsbm(['run', playbook, '-i', lab.inventory, '--output', 'json', ...state.args], { cwd: dir, env: state.env, timeoutMs: 60_000 });
        expect(r.signal, 'hung').toBeNull();
        expect(r.code).toBe(2);
        expect(r.stderr).not.toMatch(/\n\s+at /);
        const f = failuresOf(r).get('node02');
        expect(f?.task).toBe('Power off');
        expect(f?.msg, f?.msg).toMatch(/no answer within 1000 ms|timed? ?out/i);
        expect(r.events.filter((e) => e.type === 'retry' && e.host === 'node02').length).toBe(2);
        expect(failuresOf(r).has('node01')).toBe(false);
      },
    );
  }, 90_000);
});
