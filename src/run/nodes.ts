// The node side of a run: locks taken through the node store (src/nodes/) as plays start, each
// provisioning play's nodes admitted or refused by their records (node-gate.ts), the fenced
// check before every step that changes a node, records moved as nodes move (node-records.ts),
// and, after the plays, every node that did not finish ended safe through its BMC (powered off,
// media ejected, read back) unless on_deploy_failure: leave. A lost lock stops that node's steps;
// a store that cannot vouch for any lock stops them all (each check fails).
import type { Admission, NodeFacts, ProvisionPlay, RunHooks, SettleApi } from '../executor/deps.js';
import { NodeNotHeld } from '../executor/task-status.js';
import { END_SAFE_TASK_ID } from '../journal/resume.js';
import type { LockTarget } from '../journal/node-key.js';
import type { NodeEnd } from '../output/host-outcome.js';
import { lockKeyOf } from '../nodes/record.js';
import type { HeldNodes, NodeLease, NodeRecord, NodeRecordInput, NodeStore } from '../nodes/types.js';
import { nodeVars, refusal } from './node-gate.js';
import { finished, type Kind, moving, nodeEnd, type SafeEnd, unfinished, unrecorded, type Who } from './node-records.js';

interface HostNode {
  facts: NodeFacts;
  /** Set by a provisioning play that admitted the host. */
  kind?: Kind;
  partial: boolean;
  check: boolean;
  recordKey: string;
  /** The record as last read or written. */
  record?: NodeRecord;
  /** This run moved it to deploying/undeploying (a step changed it). */
  moved: boolean;
  /** The node gate refused it: this run never touched it, so it is neither ended safe nor recorded. */
  refused?: boolean;
}

export interface RunNodesOptions {
  runId: string;
  /** Absolute path of the playbook (records say what made a node so). */
  playbook: string;
  /** Run ids of the runs this one resumes (a record one of them wrote is this run's to finish). */
  chain: ReadonlySet<string>;
  /** --resume: hosts that failed before and stay failed (ended safe here if they were not). */
  staysFailed?: (host: string) => string | undefined;
}

export interface RunNodes {
  hooks: Required<Pick<RunHooks, 'beforePlay' | 'admit' | 'beforeTask' | 'nodeLost' | 'settle'>>;
  /** Releases every lock and closes the store. */
  close(): Promise<void>;
}

/** The record of a node: under its key (or key#System), else the one record of its BMC when the inventory names no System. */
function findRecord(records: readonly NodeRecord[], f: NodeFacts): { key: string; record?: NodeRecord } {
  const wanted = f.system ? `${f.key}#${f.system}` : f.key;
  const exact = records.find((r) => r.key === wanted) ?? (f.system ? records.find((r) => r.key === f.key) : undefined);
  if (exact) return { key: exact.key, record: exact };
  if (!f.system) {
    const under = records.filter((r) => lockKeyOf(r.key) === f.key);
    if (under.length === 1) return { key: under[0]!.key, record: under[0]! };
  }
  return { key: wanted };
}

export function runNodes(store: NodeStore, o: RunNodesOptions): RunNodes {
  const held: HeldNodes[] = [];
  const taken = new Set<string>();
  const hosts = new Map<string, HostNode>();
  const lostSignals = new Map<string, AbortSignal>();
  const who: Who = { playbook: o.playbook, runId: o.runId };
  const lease = (key: string): NodeLease | undefined => {
    for (const h of held) {
      const l = h.lease(key);
      if (l) return l;
    }
    return undefined;
  };

  /** Writes through the lease; a refusal means this run no longer holds the node. */
  const write = async (n: HostNode, record: NodeRecordInput): Promise<void> => {
    const l = lease(n.facts.key);
    if (!l) return;
    try {
      n.record = await store.write(l, record);
    } catch (e) {
      throw new NodeNotHeld((e as Error).message);
    }
  };

  const beforePlay = async (targets: LockTarget[]): Promise<void> => {
    // Every targeted node is locked before the play touches any of them (all or none).
    const fresh = targets.filter((t) => !taken.has(t.key));
    if (fresh.length === 0) return;
    held.push(await store.acquire(fresh, o.runId));
    for (const t of fresh) taken.add(t.key);
  };

  const admit = async (play: ProvisionPlay, facts: readonly NodeFacts[]): Promise<ReadonlyMap<string, Admission>> => {
    const records = await store.list();
    const out = new Map<string, Admission>();
    for (const f of facts) {
      const found = findRecord(records, f);
      // A node this run (or a run it resumes) made active is its own work, continued, not a rebuild.
      const own = found.record?.runId !== undefined && (found.record.runId === o.runId || o.chain.has(found.record.runId));
      const refused = refusal(play.provision, f, found.record, o.playbook, own);
      const node = { facts: f, partial: play.partial, check: play.check, recordKey: found.key, moved: false, ...(found.record ? { record: found.record } : {}) };
      hosts.set(f.host, refused === undefined ? { ...node, kind: play.provision } : { ...node, refused: true });
      out.set(f.host, { ...(refused !== undefined ? { refused } : {}), node: nodeVars(found.record) });
    }
    return out;
  };

  const beforeTask = async (host: string, _taskId: string, step: { changesNode: boolean }): Promise<void> => {
    if (!step.changesNode) return;
    const n = hosts.get(host);
    const l = n ? lease(n.facts.key) : undefined;
    if (!n || !l) return;
    try {
      await store.check(l);
    } catch (e) {
      throw new NodeNotHeld((e as Error).message);
    }
    if (n.kind && !n.moved && !n.check) {
      await write(n, moving(n.recordKey, n.facts, n.record, n.kind, who));
      n.moved = true;
    }
  };

  const nodeLost = (host: string): AbortSignal | undefined => {
    const n = hosts.get(host);
    const l = n ? lease(n.facts.key) : undefined;
    if (!l) return undefined;
    let s = lostSignals.get(l.key);
    if (!s) {
      const ac = new AbortController();
      const lost = l.lost;
      const fire = () => ac.abort(new NodeNotHeld(`${host}: this run no longer holds the node's lock (${(lost.reason as Error)?.message ?? 'lost'}); its steps stop`));
      if (lost.aborted) fire();
      else lost.addEventListener('abort', fire, { once: true });
      s = ac.signal;
      lostSignals.set(l.key, s);
    }
    return s;
  };

  const settle = async (api: SettleApi): Promise<Record<string, NodeEnd>> => {
    const out: Record<string, NodeEnd> = {};
    // Hosts a resume left failed: ended safe now if the run that failed them could not (killed).
    const leftFailed = Object.keys(api.ends).filter((host) => !hosts.has(host) && o.staysFailed?.(host));
    const records = leftFailed.length ? await store.list() : [];
    for (const host of leftFailed) {
      const f = api.facts(host);
      if (!f) continue;
      const found = findRecord(records, f);
      hosts.set(host, { facts: f, partial: false, check: false, recordKey: found.key, moved: false, ...(found.record ? { record: found.record } : {}) });
    }
    await Promise.all(
      [...hosts].map(async ([host, n]) => {
        const end = api.ends[host];
        const node = await settleOne(api, host, n, end?.outcome ?? 'unfinished', end?.reason ?? 'the run stopped').catch((e: Error) =>
          unrecorded(n.record, `the record could not be written: ${e.message}`),
        );
        if (node) out[host] = node;
      }),
    );
    return out;
  };

  /** Whether this run is the one to finish the node's record (it moved it, or a run it resumes did). */
  const ours = (n: HostNode) => n.moved || (n.record?.runId !== undefined && (n.record.runId === o.runId || o.chain.has(n.record.runId)));

  const settleOne = async (api: SettleApi, host: string, n: HostNode, outcome: string, reason: string): Promise<NodeEnd | undefined> => {
    // A refused node is in the state the gate found it in (often active, in service): powering it
    // off would do what the refusal exists to prevent.
    if (n.check || n.refused || !ours(n)) return nodeEnd(n.record);
    const busy = n.record?.provisionState === 'deploying' || n.record?.provisionState === 'undeploying';
    const l = lease(n.facts.key);
    const lostWhy = l?.lost.aborted ? String((l.lost.reason as Error)?.message ?? 'lost') : undefined;
    if (!l || lostWhy) return unrecorded(n.record, `not updated: this run no longer holds the node's lock (${lostWhy ?? 'not taken'})`);
    const kind: Kind = n.kind ?? (n.record?.provisionState === 'undeploying' ? 'undeploy' : 'deploy');
    if (outcome === 'ok') {
      if (n.kind && (n.moved || busy)) await write(n, finished(n.recordKey, n.facts, n.record, kind, who, n.partial));
      return nodeEnd(n.record);
    }
    // A failed node already ended safe and read back (an earlier run's settle) needs nothing more.
    const safeAlready = !n.moved && n.record?.provisionState === 'deploy failed' && n.record.power?.state === 'Off' && n.record.media?.inserted === false;
    if (safeAlready) return nodeEnd(n.record);
    const why = n.record?.provisionState === 'deploy failed' && !n.moved && n.record.lastError ? n.record.lastError.replace(/^(un)?deploy: /, '') : reason;
    let safe: SafeEnd;
    if (n.facts.onFailure === 'leave') safe = { kind: 'left' };
    else {
      const r = await api.run(host, { module: 'redfish_end_safe', id: END_SAFE_TASK_ID, name: 'End the node safe: power off, eject the media (read back)' });
      safe = r.failed ? { kind: 'failed', error: String(r.msg ?? 'failed') } : { kind: 'done', read: Date.now() };
    }
    await write(n, unfinished(n.recordKey, n.facts, n.record, kind, who, why, safe));
    return nodeEnd(n.record);
  };

  return {
    hooks: { beforePlay, admit, beforeTask, nodeLost, settle },
    close: async () => {
      try {
        for (const h of held.splice(0)) await h.release();
      } finally {
        await store.close();
      }
    },
  };
}
