// Several controllers on one etcd (issue 32, "Show"): real `tsbm run` processes, each with its
// own working directory and journal directory, deploy the simulated lab's nodes through a real
// etcd this file starts (Debian's etcd-server on 127.0.0.1, random ports, data in a temporary
// directory, stopped at the end). Shown: two controllers racing for overlapping nodes deploy
// each node once; a SIGKILLed controller's nodes are taken over after the TTL; a controller
// paused (SIGSTOP) past its TTL and continued is refused by the fencing check before it acts on
// its node again; etcd stopped mid-run stops every node's destructive steps and reports the
// nodes unknown; etcd unreachable at start refuses the run with nothing touched. The TTL of the
// controllers a test kills, pauses or cuts off is the setting's `?ttl=` (`TTL` below), so the
// file stays short in CI.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import type { LockTarget } from '../../src/journal/node-key.js';
import { openNodeStore } from '../../src/nodes/open.js';
import { lockKeyOf } from '../../src/nodes/record.js';
import { parseStoreSetting } from '../../src/nodes/setting.js';
import type { NodeStore } from '../../src/nodes/types.js';
import { ETCD, type EtcdServer, startEtcd } from '../helpers/etcd-server.js';
import { type CliEvent, type CliRun, DEPLOY, failuresOf, type Running, runTsbm, spawnTsbm } from '../helpers/fault-cli.js';

/**
 * The TTL of a controller the test kills, pauses or cuts off: short, so the file stays short in
 * CI, yet long enough that a controller on a loaded machine keeps its lease while it runs. A
 * controller that must simply finish uses the default (30 s): on a machine this loaded a few
 * seconds without CPU would expire a shorter lease, and that run would rightly stop.
 */
const TTL = 8;
const WAIT_AGENT = 'Wait for the ramdisk and check it is this node';
const INSTALL = 'Install the image to the root disk';

let dir: string;
let lab: Lab;
let etcd: EtcdServer;
let scenario = 0;

/** A fresh key prefix per test (its own locks and records in the one etcd): the setting with the default TTL, and with `TTL`. */
function newState(): { state: string; short: string } {
  const state = `etcd://${etcd.hostPort}/runs${process.pid}-${++scenario}`;
  return { state, short: `${state}?ttl=${TTL}` };
}

/** One controller: its own working directory and journal directory (and an unused lock dir). */
function controller(name: string, state: string) {
  const home = join(dir, `${name}-${scenario}`);
  mkdirSync(home, { recursive: true });
  const env = { ...process.env, TSBM_LOCK_DIR: join(home, 'locks') };
  const args = (limit: string[], extra: string[] = []) => [
    'run', DEPLOY, '-i', lab.inventory, '--output', 'json', '--journal-dir', join(home, 'runs'), '--state', state,
    '-l', limit.join(','), ...extra,
  ];
  return {
    home,
    spawn: (limit: string[], extra: string[] = []): Running => spawnTsbm(args(limit, extra), { cwd: home, env, timeoutMs: 170_000 }),
    run: (limit: string[], extra: string[] = []): Promise<CliRun> => runTsbm(args(limit, extra), { cwd: home, env, timeoutMs: 170_000 }),
    nodes: (...a: string[]): Promise<CliRun> => runTsbm(['nodes', ...a, '--state', state], { cwd: home, env, timeoutMs: 60_000 }),
  };
}

const bootcRuns = (name: string): number => {
  const n = lab.nodes.find((x) => x.cfg.name === name)!;
  try {
    return Number(readFileSync(join(n.root, 'sim/bootc-count'), 'utf8').trim());
  } catch {
    return 0;
  }
};
const counts = (names: readonly string[]) => Object.fromEntries(names.map((n) => [n, bootcRuns(n)]));
const runIdOf = (r: CliRun) => String(r.events.find((e) => e.type === 'run_start')?.runId);
const explain = (r: CliRun) =>
  `exit ${r.code} ${r.signal ?? ''}; failures ${JSON.stringify([...failuresOf(r).values()].map((f) => [f.host, f.task, f.msg]))}; stderr ${r.stderr.slice(-1500)}`;

interface Rec {
  name: string;
  provisionState: string;
  runId?: string;
}
async function records(c: ReturnType<typeof controller>): Promise<Record<string, Rec>> {
  const r = await c.nodes('list', '--output', 'json');
  expect(r.code, r.stderr).toBe(0);
  return Object.fromEntries((JSON.parse(r.stdout) as Rec[]).map((x) => [x.name, x]));
}

/** The node's end in the recap (state, error). */
const recapNode = (r: CliRun, host: string) =>
  (r.events.find((e) => e.type === 'recap') as unknown as { hosts: Record<string, { node?: Record<string, unknown> }> } | undefined)?.hosts[host]?.node;

/** The lock targets of the nodes whose records a store holds. */
async function lockTargets(store: NodeStore): Promise<LockTarget[]> {
  return (await store.list()).map((r) => ({ host: r.name, key: lockKeyOf(r.key) }));
}

/** Resolves with the first JSON event of a running controller that matches. */
function whenEvent(p: Running, match: (e: CliEvent) => boolean): Promise<CliEvent> {
  return new Promise((ok, fail) => {
    let buf = '';
    const onData = (d: string) => {
      buf += d;
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const l of lines) {
        let e: CliEvent;
        try {
          e = JSON.parse(l) as CliEvent;
        } catch {
          continue;
        }
        if (match(e)) {
          p.child.stdout!.off('data', onData);
          ok(e);
          return;
        }
      }
    };
    p.child.stdout!.on('data', onData);
    p.child.once('close', () => {
      void p.done.then((r) => fail(new Error(`the controller ended before the awaited event: ${explain(r)}`)));
    });
  });
}

const lockedOut = (r: CliRun) => r.events.some((e) => e.type === 'warning' && /is locked by run/.test(String(e.message)));

/**
 * Waits (bounded) until the nodes' locks are free, probing with the store in this process (a
 * refused `tsbm run` per probe would cost a process start each), then runs the controller.
 */
async function untilTaken(c: ReturnType<typeof controller>, state: string, limit: string[]): Promise<CliRun> {
  const store = await openNodeStore(parseStoreSetting(state, 'test', undefined));
  try {
    const targets = (await lockTargets(store)).filter((t) => limit.includes(t.host));
    for (let i = 0; ; i++) {
      const held = await store.acquire(targets, 'probe').catch((e: Error) => {
        if (i >= 300 || !/is locked by run/.test(e.message)) throw e;
        return undefined;
      });
      if (held) {
        await held.release();
        break;
      }
      await new Promise((res) => setTimeout(res, 200));
    }
  } finally {
    await store.close();
  }
  return c.run(limit);
}

if (!ETCD) it.skip('several controllers on etcd: SKIPPED because etcd is not installed (apt-get install etcd-server)', () => {});

describe.skipIf(!ETCD)('several controllers on one etcd', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-etcd-runs-'));
    etcd = await startEtcd();
    // Boots long enough (1.5 s) that a test can act while a controller waits for a ramdisk.
    lab = await startLab({ nodes: 4, dir: join(dir, 'lab'), bootDelayMs: 1500, powerDelayMs: 30 });
  }, 120_000);

  afterAll(async () => {
    await lab?.close();
    await etcd?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('two controllers racing for overlapping nodes deploy each node once', async () => {
    const { state } = newState();
    const a = controller('a', state);
    const b = controller('b', state);
    const all = ['node01', 'node02', 'node03', 'node04'];
    const before = counts(all);
    const [ra, rb] = await Promise.all([a.spawn(['node01', 'node02', 'node03']).done, b.spawn(['node02', 'node03', 'node04']).done]);
    // The overlap is refused to one of them: by the other's locks (the whole run, before any
    // host), or, when the other had already finished, by the records it left (active).
    const lockRefused = [ra, rb].filter(lockedOut);
    for (const r of lockRefused) {
      expect(r.code, explain(r)).toBe(1);
      // How to continue names the same node store (a resume on another store would not see these locks).
      expect(r.stderr).toContain(`--state ${state} --resume `);
      expect(r.events.filter((e) => e.type === 'host_task_start')).toEqual([]);
    }
    expect(lockRefused.length, `${explain(ra)}\n${explain(rb)}`).toBeLessThanOrEqual(1);
    // The refused controller runs again once the other is done: the shared records refuse the
    // nodes the other deployed; only its own node is deployed.
    const again = lockRefused.length === 1 ? await (lockedOut(ra) ? a : b).run(lockedOut(ra) ? ['node01', 'node02', 'node03'] : ['node02', 'node03', 'node04']) : undefined;
    for (const r of [ra, rb, again]) {
      if (!r || lockedOut(r)) continue;
      expect([0, 2], explain(r)).toContain(r.code);
      for (const f of failuresOf(r).values()) expect(f.msg, explain(r)).toMatch(/is active: .* so it is refused/);
    }
    const after = counts(all);
    for (const n of all) expect(after[n]! - before[n]!, n).toBe(1);
    const recs = await records(a);
    for (const n of all) expect(recs[n]?.provisionState, n).toBe('active');
  }, 240_000);

  it('a SIGKILLed controller holds its nodes for the TTL, then another controller takes them over', async () => {
    const { state, short } = newState();
    const a = controller('a', short);
    const b = controller('b', state);
    const nodes = ['node01', 'node02'];
    const before = counts(nodes);
    const pa = a.spawn(nodes);
    await whenEvent(pa, (e) => e.type === 'host_task_start' && e.task === WAIT_AGENT);
    pa.child.kill('SIGKILL');
    const ra = await pa.done;
    expect(ra.signal).toBe('SIGKILL');
    const dead = runIdOf(ra);
    // The dead controller's locks are still in etcd: another controller is refused, naming it.
    const store = await openNodeStore(parseStoreSetting(state, 'test', undefined));
    const keys = await lockTargets(store);
    expect(keys.length).toBe(2);
    const refused = await store.acquire(keys, 'probe').then(
      async (h) => {
        await h.release();
        return undefined;
      },
      (e: Error) => e.message,
    );
    // (Unless the machine was so slow that the TTL ran out before the probe: then nothing to see.)
    if (refused !== undefined) expect(refused).toMatch(new RegExp(`is locked by run ${dead} \\(controller \\S+, pid ${pa.child.pid}`));
    await store.close();
    // The records say what the dead run left: deploying, by that run.
    const left = await records(b);
    for (const n of nodes) expect(left[n], n).toMatchObject({ provisionState: 'deploying', runId: dead });
    const rb = await untilTaken(b, state, nodes);
    expect(rb.code, explain(rb)).toBe(0);
    const after = counts(nodes);
    for (const n of nodes) expect(after[n]! - before[n]!, n).toBe(1);
    const recs = await records(b);
    for (const n of nodes) expect(recs[n], n).toMatchObject({ provisionState: 'active', runId: runIdOf(rb) });
  }, 240_000);

  it('a controller paused (SIGSTOP) past its TTL and continued is refused by the fencing check before it acts on its node', async () => {
    const { state, short } = newState();
    const a = controller('a', short);
    const b = controller('b', state);
    const nodes = ['node03'];
    const bmc = lab.nodes.find((n) => n.cfg.name === 'node03')!.bmc!.state;
    const before = counts(nodes);
    const pa = a.spawn(nodes);
    await whenEvent(pa, (e) => e.type === 'host_task_start' && e.task === WAIT_AGENT);
    pa.child.kill('SIGSTOP');
    try {
      // Another controller takes the node once the paused one's lease expired, and deploys it.
      const rb = await untilTaken(b, state, nodes);
      expect(rb.code, explain(rb)).toBe(0);
      const resets = bmc.resets.length;
      const power = bmc.powerState;
      pa.child.kill('SIGCONT');
      const ra = await pa.done;
      expect(ra.code, explain(ra)).toBe(2);
      const fell = failuresOf(ra).get('node03');
      expect(fell?.msg, explain(ra)).toMatch(/no longer holds the node's lock/);
      // Continued, it started no step that changes the node, and asked the BMC for nothing that would.
      const started = ra.events.filter((e) => e.type === 'host_task_start').map((e) => e.task);
      expect(started.slice(started.indexOf(WAIT_AGENT) + 1)).not.toContain(INSTALL);
      expect(bmc.resets.length).toBe(resets);
      expect(bmc.powerState).toBe(power);
      expect(counts(nodes).node03! - before.node03!).toBe(1);
      // Its end reports the node unknown and leaves the record to the run that holds it now.
      expect(recapNode(ra, 'node03')).toMatchObject({ state: 'unknown' });
      expect((await records(b)).node03).toMatchObject({ provisionState: 'active', runId: runIdOf(rb) });
    } finally {
      pa.child.kill('SIGCONT');
    }
  }, 240_000);

  it('a lease lost for one node (its lock removed): that node stops and is reported, the other goes on', async () => {
    const { state } = newState();
    const a = controller('a', state);
    const nodes = ['node02', 'node04'];
    const before = counts(nodes);
    const store = await openNodeStore(parseStoreSetting(state, 'test', undefined));
    const client = new Etcd3({ hosts: `http://${etcd.hostPort}` });
    const pa = a.spawn(nodes);
    try {
      await whenEvent(pa, (e) => e.type === 'host_task_start' && e.task === WAIT_AGENT && e.host === 'node02');
      // Someone removes node02's lock behind the run (etcdctl del): only that node is no longer the run's.
      const lock = (await lockTargets(store)).find((t) => t.host === 'node02')!;
      const prefix = new URL(state.replace(/^etcd:/, 'http:')).pathname.slice(1);
      expect((await client.delete().key(`${prefix}/locks/${lock.key}`)).deleted).toBe('1');
    } finally {
      client.close();
      await store.close();
    }
    const ra = await pa.done;
    expect(ra.code, explain(ra)).toBe(2);
    const fails = failuresOf(ra);
    expect([...fails.keys()], explain(ra)).toEqual(['node02']);
    expect(fails.get('node02')?.msg).toMatch(/no longer holds the node's lock \(its lock in etcd was deleted/);
    expect(recapNode(ra, 'node02')).toMatchObject({ state: 'unknown' });
    expect(recapNode(ra, 'node04')).toMatchObject({ state: 'active' });
    const after = counts(nodes);
    expect(after.node02! - before.node02!).toBe(0);
    expect(after.node04! - before.node04!).toBe(1);
    const recs = await records(a);
    expect(recs.node04).toMatchObject({ provisionState: 'active', runId: runIdOf(ra) });
    expect(recs.node02).toMatchObject({ provisionState: 'deploying', runId: runIdOf(ra) });
  }, 240_000);

  it('etcd stopped mid-run: no new destructive step on any node, the nodes reported unknown, exit 2', async () => {
    const own = await startEtcd();
    try {
      const a = controller('lost', `etcd://${own.hostPort}?ttl=${TTL}`);
      const nodes = ['node01', 'node04'];
      const before = counts(nodes);
      const pa = a.spawn(nodes);
      await whenEvent(pa, (e) => e.type === 'host_task_start' && e.task === WAIT_AGENT);
      await own.stop();
      const ra = await pa.done;
      expect(ra.code, explain(ra)).toBe(2);
      const fails = failuresOf(ra);
      for (const n of nodes) {
        expect(fails.get(n)?.msg, explain(ra)).toMatch(/no longer holds the node's lock \(.*(not renewed|did not answer|lost)/);
        expect(recapNode(ra, n), n).toMatchObject({ state: 'unknown' });
      }
      expect(ra.events.filter((e) => e.type === 'host_task_start' && e.task === INSTALL)).toEqual([]);
      expect(counts(nodes)).toEqual(before);
    } finally {
      await own.remove();
    }
  }, 240_000);

  it('etcd unreachable at start: the run is refused, exit 1, nothing touched', async () => {
    const down = await startEtcd();
    const hostPort = down.hostPort;
    await down.remove();
    const c = controller('down', `etcd://${hostPort}?ttl=${TTL}`);
    const resets = lab.nodes[0]!.bmc!.state.resets.length;
    const r = await c.run(['node01']);
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^tsbm: error: the node store etcd at http://${hostPort.replace(/\./g, '\\.')} did not answer: .*nothing was touched`, 'm'));
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr).not.toContain('Resolution note');
    expect(r.events.filter((e) => e.type === 'host_task_start')).toEqual([]);
    expect(lab.nodes[0]!.bmc!.state.resets.length).toBe(resets);
    // No journal: the run did not start.
    let journals: string[] = [];
    try {
      journals = readdirSync(join(c.home, 'runs'));
    } catch {
      // not even the directory
    }
    expect(journals.filter((f) => f.endsWith('.jsonl'))).toEqual([]);
  }, 120_000);
});

