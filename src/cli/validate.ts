// `tsbm validate PLAYBOOK... [-i INV]...`: checks playbooks (and with -i, that every variable
// a task reads is defined for every host it targets) without connecting anywhere. Exit 0 or 4.
import { type Command, Option } from 'commander';
import { addVaultOptions, type VaultFlags } from './vault-options.js';

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

const EXAMPLES = `
Examples:
  tsbm validate playbooks/*.yml
  tsbm validate playbooks/deploy-bootc.yml -i inventory.yml -e image=oci://registry/os:42
  tsbm validate deploy.yml -i lab.yml --output json      (for CI: {ok, errors:[{file,line,col,message,hint,hosts?}]})

Checks YAML, schemas, module names and arguments, host patterns, roles and file references,
template syntax (naming the Handlebars form of Jinja habits) and, with -i, that every variable
a task reads is defined to its last key (instance_info.boot_iso) for every host it targets.
A tsbm_sim inventory is checked against the inventory its lab would write. Prints one line per
error: file:line:col: message (hint). Exit 0 when all is well, 4 otherwise.
\`tsbm run\` runs the same checks before its first task.`;

export function register(program: Command): void {
  const validate = program
    .command('validate')
    .description('check playbooks (and inventories) without connecting anywhere')
    .argument('<playbook...>', 'playbook files')
    .option(
      '-i, --inventory <files...>',
      'inventory: YAML files, executable scripts or directories (one or more, after the playbooks; repeatable): also check variables per host',
      collect,
    )
    .option('-e, --extra-vars <vars>', 'k=v pairs, a JSON/YAML object or @file.yml (repeatable)', collect)
    .option('--roles-path <dirs>', 'where roles are found after roles/ beside the playbook (DIR:DIR, repeatable; also $TSBM_ROLES_PATH)', collect)
    .addOption(
      new Option('--output <mode>', 'plain lines (default) or one JSON object').choices(['plain', 'json']),
    );
  addVaultOptions(validate)
    .addHelpText('after', EXAMPLES)
    .action(
      async (playbooks: string[], flags: { inventory?: string[]; extraVars?: string[]; output?: string; rolesPath?: string[] } & VaultFlags) => {
        const { validateCommand } = await import('./validate-command.js');
        process.exitCode = await validateCommand(playbooks, flags);
      },
    );
}
