// The vault options every command that reads playbooks, vars or inventories takes, as
// ansible-playbook spells them. Declared once; src/cli/vault-setup.ts acts on them.
import type { Command } from 'commander';

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

export interface VaultFlags {
  vaultPasswordFile?: string[];
  vaultId?: string[];
  askVaultPass?: boolean;
}

export function addVaultOptions(cmd: Command): Command {
  return cmd
    .option('--vault-password-file <file>', 'vault password file (an executable is run; repeatable; vault_password_file in tsbm.cfg)', collect)
    .option('--vault-id <id>', 'a vault id and its password: LABEL@FILE, LABEL@prompt or FILE (repeatable)', collect)
    .option('-J, --ask-vault-pass', 'ask for the vault password on the terminal');
}
