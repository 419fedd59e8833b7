// `tsbm config`: the settings in effect (project config file, TSBM_* variables, defaults) and
// where each one came from, as `ansible-config dump` shows Ansible's.
import type { Command } from 'commander';

const HELP = `
The config file is the first of: $TSBM_CONFIG, ./tsbm.cfg, ~/.tsbm.cfg, /etc/tsbm/tsbm.cfg
(as Ansible finds ansible.cfg; a ./tsbm.cfg in a directory anyone may write to is passed over).
It is INI, like ansible.cfg:

  [defaults]
  inventory = inventory.yml
  roles_path = roles:/srv/tsbm/roles
  forks = 20
  vault_password_file = ~/.tsbm-vault-pass

Relative paths in it are relative to the file. A command-line option wins over an environment
variable, which wins over the file. See docs/config.md.`;

export function register(program: Command): void {
  program
    .command('config')
    .description('show the settings in effect (tsbm.cfg, TSBM_* variables) and where each came from')
    .option('--json', 'print JSON instead of lines')
    .addHelpText('after', HELP)
    .action(async (opts: { json?: boolean }) => {
      const { configCommand } = await import('./config-command.js');
      process.stdout.write(configCommand(opts.json === true));
    });
}
