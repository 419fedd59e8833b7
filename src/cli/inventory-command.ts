// The work behind `tsbm inventory`: returns the text to print, throws TsbmError on mistakes.
import { optionsError } from '../errors.js';
import { addPlaybookDirVars, loadInventories } from '../inventory/load.js';
import { inventoryGraph, inventoryHost, inventoryList } from '../inventory/show.js';

export function inventoryCommand(flags: InventoryFlags): string {
  const modes = [flags.list, flags.graph, flags.host].filter((m) => m !== undefined && m !== false);
  if (modes.length !== 1)
    throw optionsError(
      'choose one of --list, --graph or --host NAME',
      'e.g. tsbm inventory -i inventory.yml --list',
    );
  if (!flags.inventory?.length) throw optionsError('no inventory given', 'add -i inventory.yml (repeatable), or set inventory in tsbm.cfg or TSBM_INVENTORY');
  if (flags.export && !flags.list) throw optionsError('--export goes with --list', 'e.g. tsbm inventory -i inventory.yml --list --export');
  const inv = loadInventories(flags.inventory);
  if (flags.playbookDir) addPlaybookDirVars(inv, flags.playbookDir);
  if (flags.list) return `${JSON.stringify(inventoryList(inv, flags.export === true), null, 2)}\n`;
  if (flags.host !== undefined) return `${JSON.stringify(inventoryHost(inv, flags.host), null, 2)}\n`;
  const root = typeof flags.graph === 'string' ? flags.graph : 'all';
  if (!inv.groups.has(root))
    throw optionsError(
      `group "${root}" is not in the inventory`,
      'run --graph without a group to see them all',
    );
  return inventoryGraph(inv, root, flags.vars === true);
}

export interface InventoryFlags {
  inventory?: string[];
  list?: boolean;
  graph?: boolean | string;
  host?: string;
  vars?: boolean;
  export?: boolean;
  playbookDir?: string;
}
