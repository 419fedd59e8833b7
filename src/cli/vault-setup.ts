// Fills the process's vault keyring from the command's vault options and the config, before
// anything is loaded, and wires every decrypted value (and every password) into the redactor.
import { homedir } from 'node:os';
import type { Settings } from '../config/settings.js';
import { optionsError } from '../errors.js';
import { type VaultSecret, vaultKeyring } from '../vault/keyring.js';
import { DEFAULT_VAULT_ID, parseVaultId, passwordFromFile, type VaultIdSpec } from '../vault/sources.js';
import { redactor } from './context.js';
import type { VaultFlags } from './vault-options.js';

let wired = false;

/** The vault ids to read, in Ansible's order: the config's identity list, --vault-id, password files, the prompt. */
export function vaultIdSpecs(flags: VaultFlags, cfg: Pick<Settings, 'get'>): VaultIdSpec[] {
  const specs = [...(cfg.get('vault_identity_list') ?? []), ...(flags.vaultId ?? [])].map(parseVaultId);
  const configured = cfg.get('vault_password_file');
  const files = flags.vaultPasswordFile?.length ? flags.vaultPasswordFile : configured ? [configured] : [];
  for (const f of files) specs.push({ label: DEFAULT_VAULT_ID, source: f });
  if (flags.askVaultPass || cfg.get('ask_vault_pass')) specs.push({ label: DEFAULT_VAULT_ID, source: 'prompt' });
  return specs;
}

export async function setupVault(flags: VaultFlags, cfg: Pick<Settings, 'get'>): Promise<void> {
  if (!wired) {
    vaultKeyring.onPlaintext((text) => redactor.add(text));
    wired = true;
  }
  const secrets: VaultSecret[] = [];
  for (const s of vaultIdSpecs(flags, cfg)) {
    const secret =
      s.source === 'prompt'
        ? await promptSecret(s.label)
        : passwordFromFile(s.source.startsWith('~/') ? `${homedir()}${s.source.slice(1)}` : s.source, s.label, s.source);
    redactor.add(secret.password.toString('utf8'));
    secrets.push(secret);
  }
  vaultKeyring.set(secrets);
}

async function promptSecret(label: string): Promise<VaultSecret> {
  if (!process.stdin.isTTY) {
    throw optionsError('--ask-vault-pass needs a terminal to ask on', 'in CI, give --vault-password-file FILE (or TSBM_VAULT_PASSWORD_FILE)');
  }
  const { readHidden } = await import('./read-hidden.js');
  const text = await readHidden(label === DEFAULT_VAULT_ID ? 'Vault password: ' : `Vault password (${label}): `);
  if (text === '') throw optionsError('no vault password was typed', 'type it at the prompt, or give --vault-password-file FILE');
  return { label, password: Buffer.from(text, 'utf8'), source: `the ${label === DEFAULT_VAULT_ID ? '' : `${label} `}prompt` };
}
