// The hooks a run gives the executor, from its two parts: the journal (durability barrier,
// what a resume takes over) and the nodes (locks, admission, fenced checks, records, settle).
import type { RunHooks } from '../executor/deps.js';
import type { RunNodes } from './nodes.js';

export function runHooks(journal: RunHooks | undefined, nodes: RunNodes['hooks']): RunHooks {
  return {
    ...journal,
    ...nodes,
    // The journal first: nothing may happen on a node that the journal cannot record.
    beforeTask: async (host, taskId, step) => {
      await journal?.beforeTask?.(host, taskId, step);
      await nodes.beforeTask(host, taskId, step);
    },
  };
}
