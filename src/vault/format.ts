// Ansible Vault's envelope (format 1.1 and 1.2, cipher AES256): a header line
// `$ANSIBLE_VAULT;1.1;AES256` (1.2 adds `;LABEL`, the vault id), then the payload in hex,
// wrapped; the payload is itself three hex lines: salt, HMAC, ciphertext. Reading only: tsbm
// never writes vaults (ansible-vault does).

const VAULT_HEADER = '$ANSIBLE_VAULT';

export interface VaultEnvelope {
  version: '1.1' | '1.2';
  /** The vault id of a 1.2 envelope (`ansible-vault encrypt --vault-id LABEL@...`). */
  label?: string;
  salt: Buffer;
  hmac: Buffer;
  ciphertext: Buffer;
}

/** Why a text is not a vault tsbm can read (the caller adds where it was). */
export class VaultFormatError extends Error {}

/** True when the text is vaulted (its first line is a vault header). */
export function isVaulted(text: string): boolean {
  return text.trimStart().startsWith(`${VAULT_HEADER};`);
}

const HEX = /^[0-9a-fA-F]*$/;

function hex(s: string, what: string): Buffer {
  if (s.length % 2 !== 0 || !HEX.test(s)) throw new VaultFormatError(`the vault's ${what} is not hexadecimal`);
  return Buffer.from(s, 'hex');
}

export function parseEnvelope(text: string): VaultEnvelope {
  const lines = text
    .trim()
    .split(/\r?\n/)
    .map((l) => l.trim());
  const header = (lines.shift() ?? '').split(';').map((p) => p.trim());
  if (header[0] !== VAULT_HEADER) throw new VaultFormatError('it does not start with $ANSIBLE_VAULT');
  const version = header[1];
  if (version !== '1.1' && version !== '1.2') {
    throw new VaultFormatError(`vault format ${version ?? '(none)'} is not supported (1.1 and 1.2 are; re-encrypt it with ansible-vault rekey)`);
  }
  if (header[2] !== 'AES256') throw new VaultFormatError(`cipher ${header[2] ?? '(none)'} is not supported (AES256 is)`);
  const label = version === '1.2' ? header[3] : undefined;
  if (version === '1.2' && !label) throw new VaultFormatError('a 1.2 vault names its vault id in the header, and this one does not');
  const payload = hex(lines.join(''), 'payload').toString('latin1').split('\n');
  if (payload.length !== 3) throw new VaultFormatError('the vault payload does not hold salt, HMAC and ciphertext');
  return {
    version,
    ...(label ? { label } : {}),
    salt: hex(payload[0]!, 'salt'),
    hmac: hex(payload[1]!, 'HMAC'),
    ciphertext: hex(payload[2]!, 'ciphertext'),
  };
}
