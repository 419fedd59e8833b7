// The simulated lab a `tsbm_sim` inventory asks for: started for the length of one run and
// stopped at its end. The lab package (BMCs, SSH server, ISO reader) is only loaded when an
// inventory mentions one.
import { TsbmError } from '../errors.js';
import { loadSimLab, type PreparedInventories } from '../inventory/sim-lab.js';
import { simSpecOf } from '../inventory/sim-spec.js';

export type RunLab = PreparedInventories;

export async function startRunLab(inventories: string[]): Promise<RunLab> {
  if (!inventories.some((p) => simSpecOf(p) !== undefined)) return { inventories, stop: async () => {} };
  return (await loadSimLab()).startSimInventories(inventories);
}

/**
 * A `tsbm_sim` inventory starts a lab for one run and stops it at the end: the nodes a run drove
 * are gone, and a new lab's nodes start powered off on other ports. A resume against it could
 * only pretend (skip the ISO insertion, then wait for a ramdisk that never boots), so it is
 * refused, even with --force.
 */
export function refuseLabOfOneRun(inventories: readonly string[], run: string): void {
  const lab = inventories.find((p) => simSpecOf(p) !== undefined);
  if (!lab) return;
  throw new TsbmError('options', `cannot resume run ${run}: ${lab} starts a simulated lab for one run (tsbm_sim), so the nodes that run drove are gone (a new lab's nodes start powered off, on other ports)`, {
    hint: 'run it again without --resume; for a lab that outlives a run (and can be resumed against), start one with `tsbm sim up --nodes N` and run with -i .tsbm/sim/inventory.yml',
  });
}
