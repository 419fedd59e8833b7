// Loads YAML while keeping positions, so every later error (schema, template, runtime) can
// point at file:line:col. Shared by the inventory, playbook, vars_files and role loaders.
import { readFileSync } from 'node:fs';
import { LineCounter, parseDocument, isMap, isSeq, isPair, isScalar, type Node } from 'yaml';
import { parseError, type SourcePos } from '../errors.js';
import { YAML_TAGS } from './yaml-tags.js';
import { decryptVaultScalars, decryptVaultedFile, isVaulted } from './yaml-vault.js';

export type PathSeg = string | number;

export interface YamlSource {
  file: string;
  value: unknown;
  /** Position of the node at a path (falls back to the nearest ancestor that exists). */
  pos(path: readonly PathSeg[]): SourcePos;
  /** Position of the key of a mapping entry at a path (for unknown-key errors). */
  keyPos(path: readonly PathSeg[]): SourcePos;
}

const MAX_BYTES = 16 * 1024 * 1024;

const FRIENDLY: Record<string, string> = {
  DUPLICATE_KEY: 'duplicate key',
  TAB_AS_INDENT: 'tab used for indentation (YAML allows only spaces)',
  BAD_INDENT: 'bad indentation',
};

export function parseYamlText(text: string, file: string): YamlSource {
  // A wholly vaulted file (ansible-vault encrypt) is its plaintext, decrypted in memory.
  if (isVaulted(text)) return decryptVaultedFile(text, file, parseYamlText);
  const lc = new LineCounter();
  // (`!vault |` scalars are read as their vault text, then decrypted: yaml-vault.ts)
  const doc = parseDocument(text, { lineCounter: lc, uniqueKeys: true, prettyErrors: false, merge: true, customTags: YAML_TAGS });
  const at = (offset: number): SourcePos => {
    const { line, col } = lc.linePos(offset);
    return { file, line, col };
  };
  const first = doc.errors[0];
  if (first) {
    const detail =
      FRIENDLY[first.code] ?? first.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw parseError(`YAML syntax error: ${detail}`, at(first.pos[0]), 'fix the YAML at this position');
  }
  if (text.includes('!vault')) decryptVaultScalars(doc, at);
  // Aliases can explode (billion laughs); yaml's maxAliasCount guards toJS.
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 1000 });
  } catch (e) {
    throw parseError(`YAML error: ${(e as Error).message}`, at(0));
  }

  const walk = (path: readonly PathSeg[], wantKey: boolean): SourcePos => {
    let node: Node | null | undefined = doc.contents as Node | null;
    let best: SourcePos = at(node?.range?.[0] ?? 0);
    for (let i = 0; i < path.length; i++) {
      const seg = path[i]!;
      if (isMap(node)) {
        const pair = node.items.find(
          (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg),
        );
        if (!pair) return best;
        const key = pair.key as Node;
        if (i === path.length - 1 && wantKey && key.range) return at(key.range[0]);
        node = pair.value as Node | null;
        const r = node?.range ?? key.range;
        if (r) best = at(r[0]);
      } else if (isSeq(node) && typeof seg === 'number') {
        node = node.items[seg] as Node | undefined;
        if (node?.range) best = at(node.range[0]);
        else return best;
      } else {
        return best;
      }
    }
    return best;
  };

  return { file, value, pos: (p) => walk(p, false), keyPos: (p) => walk(p, true) };
}

export function loadYamlFile(file: string, from?: SourcePos): YamlSource {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a directory' : (e as Error).message;
    throw parseError(`cannot read ${file}: ${why}`, from, 'check the path');
  }
  if (text.length > MAX_BYTES)
    throw parseError(`${file} is larger than 16 MiB`, from, 'is this really a YAML file?');
  return parseYamlText(text, file);
}
