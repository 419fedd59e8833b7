// YAML tags tsbm's loaders understand beyond YAML's own. One list for every loader (inventories,
// playbooks, vars files) and for the YAML tsbm writes (`inventory import --from-ironic`).
//   !unsafe "text"   Ansible's tag: a string that is data, never a template (util/unsafe-text.ts).
//   !vault |         Ansible Vault's: read as its vault text, then decrypted by the loader (yaml-vault.ts).
import type { ScalarTag } from 'yaml';
import { stringifyString } from 'yaml/util';
import { UnsafeText } from '../util/unsafe-text.js';

const unsafeTag: ScalarTag = {
  tag: '!unsafe',
  identify: (v) => v instanceof UnsafeText,
  resolve: (text: string) => new UnsafeText(text),
  // Always double-quoted: the text is whatever the data holds (newlines, `{{`, `: `, spaces).
  stringify: (item, ctx, onComment, onChompKeep) =>
    stringifyString({ ...item, value: (item.value as UnsafeText).text, type: 'QUOTE_DOUBLE' } as typeof item, ctx, onComment, onChompKeep),
};

const vaultTag: ScalarTag = { tag: '!vault', resolve: (text: string) => text };

export const YAML_TAGS: ScalarTag[] = [unsafeTag, vaultTag];
