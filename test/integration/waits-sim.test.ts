// Waits that say what they wait for (issue 35 point 3), on the simulated lab through the built
// CLI: a ramdisk that never boots and an installed system asked for on a port nothing listens
// on. Once a wait has seen no change for long (15 s for these 20 s timeouts) its progress says
// what it is waiting on and which variable changes it, and so does its failure.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { DEPLOY, firstFailuresOf, runTsbm, stateArgs } from '../helpers/fault-cli.js';

/** A loopback port nothing listens on (taken, then let go). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((res) => s.listen(0, '127.0.0.1', res));
  const { port } = s.address() as { port: number };
  await new Promise<void>((res) => s.close(() => res()));
  return port;
}

describe('simulated lab: waits that see no change say what they wait on and which variable changes it', () => {
  let dir: string;
  let lab: Lab;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-waits-'));
    lab = await startLab({ nodes: 2, dir, bootDelayMs: 100, powerDelayMs: 20, faults: 'node02:never_boots' });
  });
  afterAll(async () => {
    await lab?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the instance wait names instance_ssh_port, the ramdisk wait agent_timeout', async () => {
    const port = await closedPort();
    const state = stateArgs(dir);
    const extra = { wait_for_instance: true, instance_ssh_port: port, instance_ssh_timeout: 20, agent_timeout: 20 };
    const r = await runTsbm(['run', DEPLOY, '-i', lab.inventory, '--output', 'json', '-e', JSON.stringify(extra), ...state.args], {
      cwd: dir,
      env: state.env,
      timeoutMs: 180_000,
    });
    expect(r.code, r.stderr).toBe(2);
    const progress = (host: string) => r.events.filter((e) => e.type === 'progress' && e.host === host).map((e) => String(e.message));

    const instance = progress('node01').filter((m) => m.startsWith('waiting for SSH on '));
    expect(instance[0]).toMatch(new RegExp(`^waiting for SSH on root@127\\.0\\.0\\.1:${port}: \\d+\\.\\ds elapsed, attempt 1, last error: .*${port}`));
    expect(instance.at(-1)).toMatch(
      new RegExp(`the same error for \\d+\\.\\ds: .*; still waiting for the installed system to answer there: instance_ssh_port \\(${port}\\) and instance_ssh_user say where the installed system answers, instance_ssh_timeout \\(20 s\\) how long to wait$`),
    );
    const failed = firstFailuresOf(r).get('node01')!;
    expect(failed.task).toBe('Wait for the installed system to answer SSH');
    expect(failed.msg).toMatch(new RegExp(`^the installed system did not accept SSH within 20s .*waited for the installed system on root@127\\.0\\.0\\.1:${port}: instance_ssh_port \\(${port}\\)`));

    const ramdisk = progress('node02').filter((m) => m.startsWith('waiting for SSH on '));
    expect(ramdisk.at(-1)).toMatch(/still waiting for the ramdisk to answer there: agent_timeout \(20 s\) says how long to wait, ssh_host \/ ssh_port where the ramdisk answers/);
    expect(firstFailuresOf(r).get('node02')?.msg).toMatch(/^the ramdisk did not accept SSH within 20s .*waited for the ramdisk on \S+: agent_timeout \(20 s\)/);
  }, 180_000);
});
