// `tsbm inventory -i INV (--list | --graph [GROUP] | --host NAME)`: shows an inventory the way
// ansible-inventory does, with secrets masked. The implementation loads only when it runs.
import type { Command } from 'commander';

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

const EXAMPLES = `
Examples:
  tsbm inventory -i inventory.yml --list         Ansible-compatible JSON (secrets masked)
  tsbm inventory -i inventory.yml --graph        the group tree
  tsbm inventory -i inventory.yml --graph rack1 --vars
  tsbm inventory -i lab.yml -i site.yml --host node01   merged vars of one host`;

export function register(program: Command): void {
  program
    .command('inventory')
    .description('show an inventory: hosts, groups and variables')
    .option('-i, --inventory <file>', 'inventory file or directory (repeatable)', collect)
    .option('--list', 'print every group and host as JSON (ansible-inventory --list)')
    .option('--graph [group]', 'print the group tree, from GROUP (default all)')
    .option('--host <name>', "print one host's merged variables as JSON")
    .option('--vars', 'with --graph: show variables too')
    .option('--playbook-dir <dir>', 'also apply group_vars/ and host_vars/ from this directory')
    .addHelpText('after', EXAMPLES)
    .action(async (flags: InventoryFlags) => {
      const { inventoryCommand } = await import('./inventory-command.js');
      process.stdout.write(inventoryCommand(flags));
    });
}

export interface InventoryFlags {
  inventory?: string[];
  list?: boolean;
  graph?: boolean | string;
  host?: string;
  vars?: boolean;
  playbookDir?: string;
}
