// `tsbm inventory -i INV (--list | --graph [GROUP] | --host NAME)`: shows an inventory the way
// ansible-inventory does, with secrets masked. The implementation loads only when it runs.
import type { Command } from 'commander';
import type { InventoryFlags } from './inventory-command.js';
import type { ImportFlags } from './inventory-import.js';
import { addVaultOptions, type VaultFlags } from './vault-options.js';

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

const EXAMPLES = `
Examples:
  tsbm inventory -i inventory.yml --list         ansible-inventory's JSON (secrets masked)
  tsbm inventory -i hosts.ini --list --export    an INI inventory; group vars kept in their groups
  tsbm inventory -i inventory.yml --graph        the group tree
  tsbm inventory -i inventory.yml --graph rack1 --vars
  tsbm inventory -i lab.yml -i site.yml --host node01   merged vars of one host
  tsbm inventory -i ./nodes.py --list             an executable inventory (Ansible's --list/--host protocol)
  tsbm inventory import --from-ironic nodes.json -o inventory.yml

Variables merge as a play sees them: later levels replace earlier ones (group_vars/all <
group_vars/GROUP < host vars < host_vars/HOST), except driver_info, instance_info and
properties, which merge key by key (credentials once for all, the BMC address per host).

An executable -i (starting with #!) is run with --list, and --host NAME per host when its
output has no _meta.hostvars; each call may take 60 s (TSBM_INVENTORY_SCRIPT_TIMEOUT=SECONDS).`;

export function register(program: Command): void {
  const inventory = program
    .command('inventory')
    .description('show an inventory: hosts, groups and variables')
    .option('-i, --inventory <file>', 'inventory: YAML or INI file, executable script or directory (repeatable; default: inventory in tsbm.cfg, $TSBM_INVENTORY)', collect)
    .option('--list', 'print every group and host as JSON, as ansible-inventory --list does')
    .option('--export', "with --list: each host's own vars, and group vars under their groups (ansible-inventory --export)")
    .option('--graph [group]', 'print the group tree, from GROUP (default all)')
    .option('--host <name>', "print one host's merged variables as JSON")
    .option('--vars', 'with --graph: show variables too')
    .option('--playbook-dir <dir>', 'also apply group_vars/ and host_vars/ from this directory');
  addVaultOptions(inventory)
    .addHelpText('after', EXAMPLES)
    .action(async (flags: InventoryFlags & VaultFlags) => {
      const { inventoryCommand } = await import('./inventory-command.js');
      const { commandSettings, inventoriesOr } = await import('./config-defaults.js');
      const cfg = commandSettings();
      await (await import('./vault-setup.js')).setupVault(flags, cfg);
      process.stdout.write(inventoryCommand({ ...flags, inventory: inventoriesOr(flags.inventory, cfg) }));
    });
  inventory
    .command('import')
    .description('make a tsbm inventory from nodes kept elsewhere (Ironic)')
    .requiredOption('--from-ironic <file>', 'JSON of `baremetal node list --long -f json` or `baremetal node show -f json` ("-" for stdin)')
    .option('-o, --output <file>', 'write the inventory here (default: stdout)')
    .option('--group <name>', 'the group the nodes go in', 'baremetal')
    .option('--per-node-secrets', 'one environment variable per node and secret (BMC_PASSWORD_NODE1...) instead of one per secret')
    .option('--force', 'replace the --output file if it exists')
    .addHelpText('after', IMPORT_EXAMPLES)
    .action(async (flags: ImportFlags) => {
      const { inventoryImportCommand } = await import('./inventory-import.js');
      inventoryImportCommand(flags);
    });
}

const IMPORT_EXAMPLES = `
Examples:
  baremetal node list --long -f json > nodes.json
  tsbm inventory import --from-ironic nodes.json -o inventory.yml
  for n in node1 node2; do baremetal node show $n -f json; done | tsbm inventory import --from-ironic - > inventory.yml
  tsbm validate playbooks/deploy-bootc.yml -i inventory.yml

driver_info, instance_info and properties are carried over as Ironic has them. Secrets (a
redfish_password, an image_pull_secret, anything Ironic shows as "******") become
{{ env "NAME" }} references, listed on stderr and at the top of the file: export them before a
run. What Ironic does not know (how to reach the ramdisk: ssh_host, ssh_user) is listed too.`;
