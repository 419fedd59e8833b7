// Turns a flat list of files into the directory tree an ISO needs, checks every name is one
// Rock Ridge and Joliet can both carry exactly, and picks the short upper-case ISO 9660
// names (unique per directory) that readers without extensions see.
import { TsbmError } from '../errors.js';

export interface IsoFileInput {
  path: string;
  data: Buffer;
}

export interface FileNode {
  kind: 'file';
  name: string;
  isoName: string;
  data: Buffer;
}

export interface DirNode {
  kind: 'dir';
  name: string; // '' for the root
  isoName: string;
  parent: DirNode | undefined;
  children: Map<string, DirNode | FileNode>;
}

/** Joliet caps names at 64 UCS-2 characters; Rock Ridge NM must fit one directory record. */
const MAX_NAME_CHARS = 64;
const MAX_NAME_BYTES = 120;
const MAX_DEPTH = 8; // ISO 9660 without Rock Ridge relocation
const FORBIDDEN = /[\u0000-\u001f/\\:;*?]/;

function nameError(path: string, why: string): TsbmError {
  return new TsbmError('runtime', `config drive: cannot store "${path}" in the ISO: ${why}`, {
    hint: 'use names without / \\ : ; * ? or control characters, at most 64 characters, at most 8 directories deep',
  });
}

function checkName(name: string, path: string): void {
  if (name === '' || name === '.' || name === '..')
    throw nameError(path, 'empty, "." or ".." path component');
  if (FORBIDDEN.test(name)) throw nameError(path, `"${name}" contains a character Joliet cannot store`);
  if (name.length > MAX_NAME_CHARS)
    throw nameError(path, `"${name}" is longer than ${MAX_NAME_CHARS} characters`);
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES)
    throw nameError(path, `"${name}" is too long in UTF-8`);
  for (const ch of name) {
    if ((ch.codePointAt(0) ?? 0) > 0xffff) throw nameError(path, `"${name}" has a character outside UCS-2`);
  }
}

export function buildTree(files: readonly IsoFileInput[]): DirNode {
  const root: DirNode = { kind: 'dir', name: '', isoName: '', parent: undefined, children: new Map() };
  for (const f of files) {
    const parts = f.path.replace(/^\/+/, '').split('/');
    if (parts.length > MAX_DEPTH) throw nameError(f.path, `more than ${MAX_DEPTH} levels deep`);
    let dir = root;
    parts.forEach((part, i) => {
      checkName(part, f.path);
      const existing = dir.children.get(part);
      const last = i === parts.length - 1;
      if (last) {
        if (existing) throw nameError(f.path, 'the path is given twice (or is also a directory)');
        dir.children.set(part, { kind: 'file', name: part, isoName: '', data: f.data });
        return;
      }
      if (existing?.kind === 'file') throw nameError(f.path, `"${part}" is both a file and a directory`);
      const next: DirNode = existing ?? {
        kind: 'dir',
        name: part,
        isoName: '',
        parent: dir,
        children: new Map(),
      };
      dir.children.set(part, next);
      dir = next;
    });
  }
  assignIsoNames(root);
  return root;
}

const dchars = (s: string): string => s.toUpperCase().replace(/[^A-Z0-9_]/g, '_');

/** ISO 9660 level 2 names (d-characters, at most 30/31 bytes), made unique within the directory. */
function assignIsoNames(dir: DirNode): void {
  const used = new Set<string>();
  const sorted = [...dir.children.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const node of sorted) {
    let base: string;
    let ext = '';
    if (node.kind === 'dir') {
      base = dchars(node.name).slice(0, 31);
    } else {
      const dot = node.name.lastIndexOf('.');
      base = dchars(dot > 0 ? node.name.slice(0, dot) : node.name);
      ext = dot > 0 ? dchars(node.name.slice(dot + 1)).slice(0, 3) : '';
      base = base.slice(0, 30 - 1 - ext.length);
    }
    if (base === '') base = '_';
    const make = (b: string) => (node.kind === 'dir' ? b : `${b}.${ext};1`);
    const maxBase = node.kind === 'dir' ? 31 : 29 - ext.length;
    let candidate = make(base);
    for (let n = 1; used.has(candidate); n++) {
      const suffix = String(n);
      candidate = make(base.slice(0, Math.max(1, maxBase - suffix.length)) + suffix);
    }
    used.add(candidate);
    node.isoName = candidate;
    if (node.kind === 'dir') assignIsoNames(node);
  }
}

/** Directories in path-table order: by depth, then parent's number, then name. */
export function dirsInPathTableOrder(root: DirNode, key: (d: DirNode) => Buffer): DirNode[] {
  const out: DirNode[] = [root];
  for (let i = 0; i < out.length; i++) {
    const subdirs = [...out[i]!.children.values()].filter((n): n is DirNode => n.kind === 'dir');
    subdirs.sort((a, b) => Buffer.compare(key(a), key(b)));
    out.push(...subdirs);
  }
  return out;
}
