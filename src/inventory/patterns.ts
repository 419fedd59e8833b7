// Host patterns for `hosts:` and `--limit`, as in Ansible: names, groups, `*`/`?` globs,
// `a:b` / `a,b` (union), `a:&b` (intersection), `a:!b` (exclusion), `~regex` (anchored at the
// start, like Python's re.match), `@file` (one name or pattern per line), `all`.
// Unions are applied first, then intersections, then exclusions; the result is in inventory order.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseError, type TsbmError } from '../errors.js';
import { expandHome } from '../template/helpers/lookups.js';
import { ensureImplicitLocalhost, IMPLICIT_LOCALHOSTS } from './load.js';
import type { Inventory } from './model.js';
import { hostsOfGroup } from './vars.js';

type Op = 'or' | 'and' | 'not';
interface Term {
  op: Op;
  text: string;
}

/** Split on commas, then on colons outside [brackets] and (parentheses), as Ansible does. */
export function splitPattern(pattern: string): Term[] {
  const out: Term[] = [];
  for (const piece of pattern.split(',')) {
    const trimmed = piece.trim();
    if (trimmed === '') continue;
    for (const raw of splitColons(trimmed)) {
      const t = raw.trim();
      if (t.startsWith('&')) out.push({ op: 'and', text: t.slice(1).trim() });
      else if (t.startsWith('!')) out.push({ op: 'not', text: t.slice(1).trim() });
      else out.push({ op: 'or', text: t });
    }
  }
  return out;
}

function splitColons(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of s) {
    if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') depth = Math.max(0, depth - 1);
    if (c === ':' && depth === 0) {
      out.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  out.push(cur);
  return out;
}

function compileRegex(text: string, pattern: string): RegExp {
  try {
    return new RegExp(`^(?:${text})`);
  } catch (e) {
    throw parseError(
      `bad regular expression in host pattern "${pattern}": ${(e as Error).message}`,
      undefined,
      'after ~ write a JavaScript regular expression, e.g. ~node0[1-4]',
    );
  }
}

function globToRegex(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

/** Syntax-only check for `tsbm validate` (no inventory, no files read). */
export function validatePattern(pattern: string): TsbmError | undefined {
  if (typeof pattern !== 'string' || pattern.trim() === '')
    return parseError(
      'empty host pattern',
      undefined,
      'use all, a group, a host or a pattern like rack1:!node07',
    );
  for (const t of splitPattern(pattern)) {
    if (t.text === '')
      return parseError(
        `host pattern "${pattern}" has an empty term after ${t.op === 'and' ? '&' : '!'}`,
        undefined,
        'write e.g. web:&prod or all:!node07',
      );
    if (t.text.startsWith('~')) {
      try {
        compileRegex(t.text.slice(1), pattern);
      } catch (e) {
        return e as TsbmError;
      }
    }
    if (t.text === '@')
      return parseError(`host pattern "${pattern}" has @ without a file name`, undefined, 'write @hosts.txt');
  }
  return undefined;
}

function matchTerm(inv: Inventory, text: string, pattern: string, baseDir: string, depth: number): string[] {
  if (text === 'all' || text === '*') return [...inv.groups.get('all')!.hosts];
  if (text.startsWith('@')) return fromFile(inv, text.slice(1), pattern, baseDir, depth);
  if (text.startsWith('~')) return matchNames(inv, compileRegex(text.slice(1), pattern));
  if (/[*?]/.test(text)) return matchNames(inv, globToRegex(text));
  if (inv.groups.has(text)) return hostsOfGroup(inv, text);
  if (inv.hosts.has(text)) return [text];
  if (IMPLICIT_LOCALHOSTS.has(text)) {
    ensureImplicitLocalhost(inv, text);
    return [text];
  }
  return [];
}

function matchNames(inv: Inventory, re: RegExp): string[] {
  const out: string[] = [];
  for (const g of inv.groups.keys()) if (re.test(g)) out.push(...hostsOfGroup(inv, g));
  for (const h of inv.groups.get('all')!.hosts) if (re.test(h)) out.push(h);
  return out;
}

function fromFile(inv: Inventory, file: string, pattern: string, baseDir: string, depth: number): string[] {
  if (file === '')
    throw parseError(`host pattern "${pattern}" has @ without a file name`, undefined, 'write @hosts.txt');
  if (depth > 5)
    throw parseError(
      `host pattern files nest too deeply at @${file}`,
      undefined,
      'an @file may not include itself',
    );
  const full = resolve(baseDir, expandHome(file));
  let text: string;
  try {
    text = readFileSync(full, 'utf8');
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (e as Error).message;
    throw parseError(
      `host pattern file @${file} cannot be read (${full}: ${why})`,
      undefined,
      'write one host name per line; the path is relative to the current directory',
    );
  }
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  return lines.flatMap((l) => select(inv, l, baseDir, depth + 1));
}

function select(inv: Inventory, pattern: string, baseDir: string, depth: number): string[] {
  const terms = splitPattern(pattern);
  const union = new Set<string>();
  for (const t of terms)
    if (t.op === 'or') for (const h of matchTerm(inv, t.text, pattern, baseDir, depth)) union.add(h);
  let result = union;
  for (const t of terms) {
    if (t.op !== 'and') continue;
    const keep = new Set(matchTerm(inv, t.text, pattern, baseDir, depth));
    result = new Set([...result].filter((h) => keep.has(h)));
  }
  for (const t of terms) {
    if (t.op !== 'not') continue;
    for (const h of matchTerm(inv, t.text, pattern, baseDir, depth)) result.delete(h);
  }
  return [...result];
}

/**
 * A `--limit` with its `@file` terms made absolute against `cwd`. A limit file is the operator's,
 * named on the command line: it is read from the current directory (as ansible-playbook reads
 * it), never from the playbook's, where a file of the same name would pick other hosts.
 */
export function limitWithAbsoluteFiles(pattern: string, cwd: string): string {
  return pattern.replace(/(^|[,:&!]\s*)@([^,:]+)/g, (_m, pre: string, file: string) => `${pre}@${resolve(cwd, expandHome(file.trim()))}`);
}

/**
 * The files a pattern reads (`@file` terms, and those named inside them, as `select` resolves
 * them), for what a resume compares: a limit file edited since the run would change its hosts.
 */
export function patternFiles(pattern: string, baseDir: string, depth = 0, out: string[] = []): string[] {
  if (depth > 5) return out;
  for (const t of splitPattern(pattern)) {
    if (!t.text.startsWith('@') || t.text === '@') continue;
    const full = resolve(baseDir, expandHome(t.text.slice(1)));
    if (out.includes(full)) continue;
    out.push(full);
    let text = '';
    try {
      text = readFileSync(full, 'utf8');
    } catch {
      continue; // the run reports an unreadable file itself
    }
    for (const line of text.split(/\r?\n/)) {
      const l = line.trim();
      if (l.includes('@') && !l.startsWith('#')) patternFiles(l, baseDir, depth + 1, out);
    }
  }
  return out;
}

/**
 * Hosts matching a pattern, in inventory order, without duplicates. Naming `localhost` when the
 * inventory lacks it adds the implicit localhost to `inv` (Ansible's behaviour).
 */
export function selectHosts(inv: Inventory, pattern: string, opts: { baseDir: string }): string[] {
  const bad = validatePattern(pattern);
  if (bad) throw bad;
  const chosen = new Set(select(inv, pattern, opts.baseDir, 0));
  return [...inv.hosts.keys()].filter((h) => chosen.has(h));
}
