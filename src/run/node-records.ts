// How a run moves a node's record (src/nodes/): to deploying (or undeploying) at its first step
// that changes the node, then, when the node leaves the run, to what it became: active,
// available, deploy failed (with why), or unknown (a partial run; a BMC that did not answer).
// Power and media are only what the BMC read back in this run.
import type { NodeFacts } from '../executor/deps.js';
import type { NodeEnd } from '../output/host-outcome.js';
import type { NodeRecord, NodeRecordInput, ProvisionState } from '../nodes/types.js';

export type Kind = 'deploy' | 'undeploy';

/** What the run leaves of a record it does not rewrite: the node's name, System and protection. */
function base(key: string, f: NodeFacts, prev: NodeRecord | undefined): NodeRecordInput {
  return {
    key,
    ...(f.system ? { system: f.system } : prev?.system ? { system: prev.system } : {}),
    name: f.host,
    provisionState: prev?.provisionState ?? 'unknown',
    protected: prev?.protected ?? false,
    ...(prev?.protectedReason ? { protectedReason: prev.protectedReason } : {}),
  };
}

export interface Who {
  playbook: string;
  runId: string;
}

export function moving(key: string, f: NodeFacts, prev: NodeRecord | undefined, kind: Kind, who: Who): NodeRecordInput {
  const image = kind === 'deploy' ? f.image : prev?.image;
  return { ...base(key, f, prev), provisionState: kind === 'deploy' ? 'deploying' : 'undeploying', ...(image ? { image } : {}), ...who };
}

/** The node got to the end of the play. */
export function finished(key: string, f: NodeFacts, prev: NodeRecord | undefined, kind: Kind, who: Who, partial: boolean): NodeRecordInput {
  if (partial) {
    return {
      ...base(key, f, prev),
      provisionState: 'unknown',
      ...(f.image ? { image: f.image } : {}),
      ...who,
      lastError: `a partial run (--tags, --skip-tags or --start-at-task) ${kind === 'deploy' ? 'deployed' : 'undeployed'} it: the whole playbook did not run, so what it is now is not known`,
    };
  }
  if (kind === 'undeploy') return { ...base(key, f, prev), provisionState: 'available', ...who };
  return { ...base(key, f, prev), provisionState: 'active', ...(f.image ? { image: f.image } : {}), ...who, activeSince: Date.now() };
}

export type SafeEnd = { kind: 'done'; read: number } | { kind: 'left' } | { kind: 'failed'; error: string } | { kind: 'not held'; why: string };

/** The node did not finish (failed, unreachable, interrupted): what the record says, with how it was left. */
export function unfinished(key: string, f: NodeFacts, prev: NodeRecord | undefined, kind: Kind, who: Who, reason: string, safe: SafeEnd): NodeRecordInput {
  const what = kind === 'deploy' ? 'deploy' : 'undeploy';
  const image = kind === 'deploy' ? (f.image ?? prev?.image) : prev?.image;
  const common = { ...base(key, f, prev), ...(image ? { image } : {}), ...who };
  if (safe.kind === 'failed') {
    return {
      ...common,
      provisionState: 'unknown',
      lastError: `${what}: ${reason}; then the run could not end it safe: ${safe.error}`,
      power: { state: 'unknown', read: Date.now() },
    };
  }
  const state: ProvisionState = 'deploy failed';
  if (safe.kind === 'left') return { ...common, provisionState: state, lastError: `${what}: ${reason} (left as it fell: on_deploy_failure: leave)` };
  if (safe.kind === 'not held') return { ...common, provisionState: state, lastError: `${what}: ${reason}` };
  return { ...common, provisionState: state, lastError: `${what}: ${reason}`, power: { state: 'Off', read: safe.read }, media: { inserted: false, read: safe.read } };
}

/** A record as the recap, the report and `runs show` show it. */
export function nodeEnd(r: NodeRecord | NodeRecordInput | undefined, note?: string): NodeEnd | undefined {
  if (!r) return undefined;
  return {
    state: r.provisionState,
    ...(r.power ? { power: r.power.state } : {}),
    ...(r.media ? { media: r.media.inserted ? 'inserted' : 'ejected' } : {}),
    ...(r.image ? { image: r.image } : {}),
    ...(r.activeSince ? { since: r.activeSince } : {}),
    ...(note ?? r.lastError ? { error: note ?? r.lastError } : {}),
    ...(r.protected ? { protected: true } : {}),
  };
}

/**
 * A node whose record this run could not write at its end (its lock lost, the store gone): what
 * it is now is not known here, so it is reported `unknown` (issue 32 point 3), with why and what
 * the record said last (its power and media are not this run's to claim).
 */
export function unrecorded(r: NodeRecord | undefined, note: string): NodeEnd {
  const last = r ? `; its record says ${r.provisionState}${r.runId ? ` (run ${r.runId})` : ''}` : '';
  return { state: 'unknown', ...(r?.image ? { image: r.image } : {}), error: `${note}${last}`, ...(r?.protected ? { protected: true } : {}) };
}
