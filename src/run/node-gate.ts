// Whether a provisioning play may act on a node, decided from its record and its variables:
// a protected node refuses every deploy, rebuild and undeploy (Ironic's `protected`); an active
// node refuses a deploy unless the run asks for a rebuild. The message names the node, what it
// runs and since when, and what to do.
import { basename } from 'node:path';
import type { NodeFacts } from '../executor/deps.js';
import type { NodeRecord } from '../nodes/types.js';
import type { Vars } from '../types.js';

const utc = (ms: number) => `${new Date(ms).toISOString().replace('T', ' ').slice(0, 16)} UTC`;

export function refusal(kind: 'deploy' | 'undeploy', f: NodeFacts, record: NodeRecord | undefined, playbook: string): string | undefined {
  const pb = basename(playbook);
  if (record?.protected || f.protected) {
    const why = record?.protected
      ? `${record.protectedReason ? ` (${record.protectedReason})` : ''}; tsbm nodes unprotect ${f.host} allows it again`
      : ` (protected: true in its variables${f.protectedReason ? `: ${f.protectedReason}` : ''})`;
    const would = kind === 'undeploy' ? 'undeploy' : record?.provisionState === 'active' ? 'reinstall' : 'deploy';
    return `${f.host} is protected${why}: ${pb} would ${would} it, so it is refused, --rebuild or not`;
  }
  if (kind === 'deploy' && record?.provisionState === 'active' && !f.rebuild) {
    const by = record.runId ? `(run ${record.runId}${record.playbook ? `, ${basename(record.playbook)}` : ''})` : '';
    const what = [record.image ? `it runs ${record.image}` : 'it was deployed', record.activeSince ? `since ${utc(record.activeSince)}` : '', by].filter(Boolean).join(' ');
    return `${f.host} is active: ${what}; ${pb} would reinstall it, so it is refused: pass --rebuild (or set rebuild: true for it) to deploy it again`;
  }
  // No record yet: what the inventory says it is (Ironic's provision_state, carried by the import).
  if (kind === 'deploy' && !record && f.declaredState && HAS_INSTANCE.has(f.declaredState) && !f.rebuild) {
    return `${f.host} is ${f.declaredState} (provision_state: ${f.declaredState} in its variables, as Ironic had it; tsbm has no record of it yet): it has an instance on it; ${pb} would reinstall it, so it is refused: pass --rebuild (or set rebuild: true for it) to deploy it`;
  }
  return undefined;
}

/** Ironic's provision states of a node with an instance on it. */
const HAS_INSTANCE = new Set(['active', 'rescue', 'rescuing', 'rescue wait', 'rescue failed', 'unrescuing', 'unrescue failed']);

/** `tsbm_node` for the play's tasks: the record as the run found it (the deploy preflight reads it). */
export function nodeVars(record: NodeRecord | undefined): Vars {
  if (!record) return { provision_state: 'none' };
  return {
    provision_state: record.provisionState,
    protected: record.protected,
    ...(record.image ? { image: record.image } : {}),
    ...(record.activeSince ? { active_since: record.activeSince } : {}),
    ...(record.runId ? { run: record.runId } : {}),
  };
}
