// The vault passwords of this process (from --vault-password-file, --vault-id, --ask-vault-pass
// or the config), and the one place vaulted text is decrypted. Every plaintext is announced to
// the listeners (the CLI registers it with the redactor), so a vaulted value is masked in every
// output like any other secret. Plaintext lives only in memory: nothing here writes a file.
import { type SourcePos, TsbmError } from '../errors.js';
import { decryptEnvelope } from './decrypt.js';
import { parseEnvelope, VaultFormatError } from './format.js';

export interface VaultSecret {
  /** The vault id (`default` without one). */
  label: string;
  password: Buffer;
  /** Where it came from, for messages: `--vault-password-file pw.txt`, `prompt`. */
  source: string;
}

const NO_PASSWORD_HINT =
  'give the vault password with --vault-password-file FILE, --vault-id LABEL@FILE or --ask-vault-pass (or vault_password_file in tsbm.cfg, TSBM_VAULT_PASSWORD_FILE)';

export class VaultKeyring {
  private secrets: VaultSecret[] = [];
  private readonly listeners: Array<(plaintext: string) => void> = [];

  /** Replaces the passwords (a command sets them once, before it loads anything). */
  set(secrets: readonly VaultSecret[]): void {
    this.secrets = [...secrets];
  }

  get size(): number {
    return this.secrets.length;
  }

  /** Called with every decrypted value (and every leaf of a decrypted file). */
  onPlaintext(listener: (plaintext: string) => void): void {
    this.listeners.push(listener);
  }

  /** Announces a value that came out of a vault, so it is treated as a secret. */
  reveal(plaintext: string): void {
    for (const l of this.listeners) l(plaintext);
  }

  /**
   * The plaintext of vaulted text found at `pos` (`what`: "vaulted value" or "vaulted file").
   * Errors name the place and what to do; they never show the ciphertext or a password.
   */
  decrypt(text: string, pos: SourcePos | undefined, what: string): string {
    const at = pos ? { pos } : {};
    let env: ReturnType<typeof parseEnvelope>;
    try {
      env = parseEnvelope(text);
    } catch (e) {
      if (!(e instanceof VaultFormatError)) throw e;
      throw new TsbmError('parse', `cannot read the ${what}: ${e.message}`, { ...at, hint: 'encrypt it again with ansible-vault' });
    }
    if (this.secrets.length === 0) {
      throw new TsbmError('parse', `the ${what} needs a vault password, and none was given`, { ...at, hint: NO_PASSWORD_HINT });
    }
    // As Ansible: the secrets of the vault's own id first, then every other one.
    const ordered = [...this.secrets.filter((s) => s.label === env.label), ...this.secrets.filter((s) => s.label !== env.label)];
    for (const s of ordered) {
      const plain = decryptEnvelope(env, s.password);
      if (plain === undefined) continue;
      const value = plain.toString('utf8');
      this.reveal(value);
      return value;
    }
    const tried = [...new Set(this.secrets.map((s) => s.source))].join(', ');
    const idNote = env.label && !this.secrets.some((s) => s.label === env.label) ? ` It was encrypted with vault id "${env.label}", and no password for that id was given.` : '';
    throw new TsbmError('parse', `cannot decrypt the ${what}: no vault password given opens it (tried ${tried}).${idNote}`, {
      ...at,
      hint: env.label ? `give --vault-id ${env.label}@FILE with its password` : 'check the vault password',
    });
  }
}

/** The process's keyring: commands fill it, the YAML loader decrypts with it. */
export const vaultKeyring = new VaultKeyring();
