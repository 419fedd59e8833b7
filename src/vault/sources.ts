// Where vault passwords come from, as ansible-playbook takes them: `--vault-id LABEL@SOURCE`
// (SOURCE a password file, an executable, or `prompt`), `--vault-password-file FILE` (id
// `default`), `--ask-vault-pass` (a prompt for `default`). A password file holds the password
// (surrounding whitespace dropped); an executable one is run and prints it; a "client" script
// (named `*-client` or `*-client.EXT`) is asked for its id with `--vault-id LABEL`.
import { execFileSync } from 'node:child_process';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { optionsError, TsbmError } from '../errors.js';
import type { VaultSecret } from './keyring.js';

export const DEFAULT_VAULT_ID = 'default';

export interface VaultIdSpec {
  label: string;
  /** A file, an executable, or `prompt`. */
  source: string;
}

/** `dev@~/pw.txt` -> {dev, ~/pw.txt}; `pw.txt` -> {default, pw.txt}; `@prompt` is refused. */
export function parseVaultId(spec: string): VaultIdSpec {
  const s = spec.trim();
  const at = s.indexOf('@');
  if (at < 0) return { label: DEFAULT_VAULT_ID, source: s };
  const label = s.slice(0, at).trim();
  const source = s.slice(at + 1).trim();
  if (!label || !source) throw optionsError(`--vault-id "${spec}" must be LABEL@SOURCE or SOURCE`, 'e.g. --vault-id prod@~/.vault-pass-prod or --vault-id dev@prompt');
  return { label, source };
}

/** Ansible's rule for password scripts that serve several ids. */
function isClientScript(file: string): boolean {
  return /-client(\.[^.]+)?$/.test(basename(file));
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The password a file or script gives for `label`. */
export function passwordFromFile(file: string, label: string, shown = file): VaultSecret {
  let out: Buffer;
  try {
    statSync(file);
  } catch {
    throw optionsError(`vault password file ${shown} not found`, 'check the path (--vault-password-file, --vault-id, vault_password_file in tsbm.cfg)');
  }
  if (executable(file)) {
    const args = isClientScript(file) ? ['--vault-id', label] : [];
    try {
      out = execFileSync(resolve(file), args, { stdio: ['inherit', 'pipe', 'pipe'], timeout: 60_000, maxBuffer: 1 << 20 });
    } catch (e) {
      const err = e as { status?: number | null; stderr?: Buffer; message: string };
      const why = err.stderr?.toString().trim().split('\n').at(-1) || err.message.split('\n')[0];
      throw new TsbmError('options', `vault password script ${shown} failed${err.status != null ? ` (exit ${err.status})` : ''}: ${why}`, {
        hint: 'run it by hand: it must print the vault password and exit 0',
      });
    }
  } else {
    try {
      out = readFileSync(file);
    } catch (e) {
      throw optionsError(`cannot read vault password file ${shown}: ${(e as Error).message}`, 'check its permissions');
    }
  }
  const password = Buffer.from(out.toString('utf8').trim(), 'utf8');
  if (password.length === 0) throw optionsError(`vault password file ${shown} is empty`, 'put the vault password in it');
  return { label, password, source: shown };
}
