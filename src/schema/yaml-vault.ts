// Ansible Vault in YAML: `key: !vault |` scalars and wholly vaulted files (vars_files,
// group_vars/host_vars, inventories, -e @file), decrypted in memory with the process's vault
// passwords (src/vault/keyring.ts). A vaulted value without a password is an error at its
// file:line:col. Every decrypted value is announced as a secret, so output masks it.
import { type Document, isScalar, visit } from 'yaml';
import { parseError, type SourcePos } from '../errors.js';
import { vaultKeyring } from '../vault/keyring.js';

export { isVaulted } from '../vault/format.js';

/** Replaces each `!vault` scalar's text with its plaintext, in place. */
export function decryptVaultScalars(doc: Document, at: (offset: number) => SourcePos): void {
  visit(doc, {
    Scalar(_, node) {
      if (node.tag !== '!vault') return;
      const pos = at(node.range?.[0] ?? 0);
      node.value = vaultKeyring.decrypt(String(node.value ?? ''), pos, 'vaulted value (!vault)');
      node.tag = undefined;
    },
  });
  // a `!vault` on a mapping or a list is no vault Ansible writes: say so rather than pass it on
  visit(doc, {
    Node(_, node) {
      if (!isScalar(node) && (node as { tag?: string }).tag === '!vault') {
        throw parseError('!vault tags a text value (as `ansible-vault encrypt_string` writes it), not a mapping or a list', at(node.range?.[0] ?? 0), 'encrypt the whole file with ansible-vault encrypt instead');
      }
    },
  });
}

/** A wholly vaulted file: its plaintext parsed as the file, every value in it a secret. */
export function decryptVaultedFile<T extends { value: unknown }>(text: string, file: string, parse: (text: string, file: string) => T): T {
  const plain = vaultKeyring.decrypt(text, { file, line: 1, col: 1 }, 'vaulted file');
  const src = parse(plain, file);
  revealLeaves(src.value);
  return src;
}

function revealLeaves(v: unknown, depth = 0): void {
  if (depth > 50) return;
  if (typeof v === 'string' || typeof v === 'number') vaultKeyring.reveal(String(v));
  else if (v && typeof v === 'object') for (const x of Object.values(v)) revealLeaves(x, depth + 1);
}
