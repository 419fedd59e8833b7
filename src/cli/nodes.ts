// `tsbm nodes list|show|protect|unprotect`: what tsbm knows of each machine (its node record:
// provision state, image, run, protected), from the node store a run uses. The work happens in
// nodes-command.ts, imported only when a subcommand runs.
import { type Command, Option } from 'commander';
import { PROVISION_STATES } from '../nodes/types.js';

export const STATE_OPTION_HELP =
  'where node locks and records live: files, files:DIR, or etcd://HOST:PORT[,HOST:PORT][/PREFIX][?ttl=S] (etcds:// for TLS) ($TSBM_STATE)';

const HELP = `
NODE is a record's inventory name, its key (bmc:10.0.0.5:443), or a Redfish address
(https://10.0.0.5), keyed as the node locks are: by BMC address, not by inventory name.

Node state is kept where the runs keep it: --state, else $TSBM_STATE, else files in the node
lock directory (--lock-dir, $TSBM_LOCK_DIR, /var/lib/tsbm/locks for root). With etcd, TLS files
come from the setting (?cacert=&cert=&key=) or TSBM_ETCD_CACERT, TSBM_ETCD_CERT, TSBM_ETCD_KEY;
an etcd user from ?user= or TSBM_ETCD_USER with TSBM_ETCD_PASSWORD. An etcd that does not answer
is an error (exit 1). protect, unprotect and set-state are refused while a run holds the node.

Examples:
  tsbm nodes list
  tsbm nodes list --state etcd://10.0.0.2:2379 --output json
  tsbm nodes show node01
  tsbm nodes protect node01 --reason "customer database"
  tsbm nodes unprotect bmc:10.0.0.5:443
  tsbm nodes set-state node07 available --reason "disk replaced, wiped by hand"`;

interface StoreFlags {
  state?: string;
  lockDir?: string;
}

const withStore = (c: Command) =>
  c.option('--state <setting>', STATE_OPTION_HELP).option('--lock-dir <dir>', 'the files store\'s directory when --state does not name one ($TSBM_LOCK_DIR)');

export function register(program: Command): void {
  const nodes = program
    .command('nodes')
    .description('what tsbm knows of each machine: provision state, image, last run, protected')
    .addHelpText('after', HELP);
  withStore(nodes.command('list').description('every node record, by inventory name'))
    .addOption(new Option('-o, --output <format>', 'text or json').choices(['text', 'json']).default('text'))
    .action(async (opts: StoreFlags & { output: string }) => {
      const { nodesList } = await import('./nodes-command.js');
      process.stdout.write(await nodesList(opts));
    });
  withStore(nodes.command('show').argument('<node>', 'inventory name, key or Redfish address').description('one node record in full'))
    .addOption(new Option('-o, --output <format>', 'text or json').choices(['text', 'json']).default('text'))
    .action(async (node: string, opts: StoreFlags & { output: string }) => {
      const { nodesShow } = await import('./nodes-command.js');
      process.stdout.write(await nodesShow(node, opts));
    });
  withStore(nodes.command('protect').argument('<node>', 'inventory name, key or Redfish address').description('refuse every destructive playbook on the node'))
    .option('--reason <text>', 'why (shown when a run is refused)')
    .action(async (node: string, opts: StoreFlags & { reason?: string }) => {
      const { nodesProtect } = await import('./nodes-command.js');
      process.stdout.write(await nodesProtect(node, true, opts));
    });
  withStore(
    nodes
      .command('set-state')
      .argument('<node>', 'inventory name, key or Redfish address')
      .argument('<state>', `one of: ${PROVISION_STATES.join(', ')}`)
      .description('record what a node is after work outside tsbm (a manual repair, a reinstall by hand)'),
  )
    .option('--reason <text>', 'why (kept as the record\'s last error for deploy failed / unknown)')
    .action(async (node: string, state: string, opts: StoreFlags & { reason?: string }) => {
      const { nodesSetState } = await import('./nodes-command.js');
      process.stdout.write(await nodesSetState(node, state, opts));
    });
  withStore(nodes.command('unprotect').argument('<node>', 'inventory name, key or Redfish address').description('allow destructive playbooks on the node again'))
    .action(async (node: string, opts: StoreFlags) => {
      const { nodesProtect } = await import('./nodes-command.js');
      process.stdout.write(await nodesProtect(node, false, opts));
    });
}
