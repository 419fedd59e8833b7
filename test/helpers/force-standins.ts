// Makes labs started by this process run tsbm's stand-ins for sgdisk, sfdisk and partx (or the
// ones named) even where the machine has the real tools (TSBM_SIM_STANDINS, read by the lab at
// start and passed to the nodes): what a lab on a bare machine runs. Returns the restore.
export function forceStandins(tools = 'all'): () => void {
  const saved = process.env.TSBM_SIM_STANDINS;
  process.env.TSBM_SIM_STANDINS = tools;
  return () => {
    if (saved === undefined) delete process.env.TSBM_SIM_STANDINS;
    else process.env.TSBM_SIM_STANDINS = saved;
  };
}
