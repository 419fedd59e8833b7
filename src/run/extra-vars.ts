// `-e/--extra-vars`: `k=v k2="v 2"`, an inline JSON/YAML object, or `@file.yml`. Repeatable;
// later arguments win key by key (top level only, as Ansible does; Ironic's node mappings
// driver_info, instance_info and properties merge one level deeper, util/merge-vars.ts). Every mistake is an
// options error (exit 5) naming the argument; YAML errors in @files also name file:line:col.
import { resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { YAML_TAGS } from '../schema/yaml-tags.js';
import { TsbmError } from '../errors.js';
import { loadYamlFile } from '../schema/yaml-source.js';
import { decryptVaultScalars } from '../schema/yaml-vault.js';
import type { Vars } from '../types.js';
import { assignVars } from '../util/merge-vars.js';

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The argument as an error may show it: a file name whole, otherwise only up to the first `=`
 * or `:` (the first name), since what follows may be a password given with -e.
 */
function shown(arg: string): string {
  const t = arg.trim();
  if (t.startsWith('@')) return `"${t}"`;
  const cut = t.search(/[=:]/);
  return cut >= 0 ? `"${t.slice(0, cut + 1)}…"` : `(${t.length} characters, not shown)`;
}

function bad(arg: string, why: string, hint?: string): TsbmError {
  return new TsbmError('options', `bad --extra-vars ${shown(arg)}: ${why}`, {
    hint: hint ?? 'use k=v pairs, a JSON/YAML object like {"k": "v"}, or @file.yml',
  });
}

function isPlainObject(v: unknown): v is Vars {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Splits `a=1 b="two words" c='x'` into key/value pairs; values stay strings. */
export function parseKeyValues(arg: string): Vars {
  const out: Vars = {};
  let i = 0;
  const n = arg.length;
  while (i < n) {
    while (i < n && /\s/.test(arg[i]!)) i++;
    if (i >= n) break;
    let token = '';
    let quote: string | undefined;
    for (; i < n; i++) {
      const c = arg[i]!;
      if (quote) {
        if (c === '\\' && quote === '"' && i + 1 < n) token += arg[++i];
        else if (c === quote) quote = undefined;
        else token += c;
      } else if (c === '"' || c === "'") quote = c;
      else if (/\s/.test(c)) break;
      else token += c;
    }
    if (quote) throw bad(arg, `unterminated ${quote} quote`);
    const eq = token.indexOf('=');
    // The word itself is not shown: in `pw=two words` it would be half the password.
    if (eq <= 0) throw bad(arg, `a word ${eq === 0 ? 'starts with =' : 'has no ='}: it is not key=value`, 'quote values with spaces (k="a b"), or give a JSON/YAML object like {"k": "v"}');
    const key = token.slice(0, eq);
    if (!KEY.test(key)) throw bad(arg, `"${key}" is not a valid variable name`, 'names are letters, digits and _, not starting with a digit');
    if (key === '__proto__') throw bad(arg, '"__proto__" is not a usable variable name');
    out[key] = token.slice(eq + 1);
  }
  return out;
}

function parseInline(arg: string): Vars {
  const doc = parseDocument(arg, { uniqueKeys: true, prettyErrors: false, customTags: YAML_TAGS });
  const err = doc.errors[0];
  if (err) throw bad(arg, `not valid JSON/YAML: ${err.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`);
  if (arg.includes('!vault')) {
    try {
      decryptVaultScalars(doc, (offset) => ({ file: '--extra-vars', line: 1, col: offset + 1 }));
    } catch (e) {
      if (!(e instanceof TsbmError)) throw e;
      throw new TsbmError('options', `in --extra-vars: ${e.message}`, e.hint ? { hint: e.hint } : {});
    }
  }
  const value: unknown = doc.toJS({ maxAliasCount: 100 });
  if (!isPlainObject(value)) throw bad(arg, 'must be an object');
  return value;
}

const fileOf = (arg: string, cwd: string): string => {
  const name = arg.slice(1);
  if (!name) throw bad(arg, 'no file name after @');
  return name.startsWith('/') ? name : `${cwd}/${name}`;
};

function parseFile(arg: string, cwd: string): Vars {
  const path = fileOf(arg, cwd);
  let value: unknown;
  try {
    const src = loadYamlFile(path);
    value = src.value;
  } catch (e) {
    if (!(e instanceof TsbmError)) throw e;
    // keep the file:line:col but make it an options error: the argument is what is wrong
    throw new TsbmError('options', `in --extra-vars ${arg}: ${e.message}`, {
      ...(e.pos ? { pos: e.pos } : {}),
      ...(e.hint ? { hint: e.hint } : {}),
    });
  }
  if (value === null || value === undefined) return {};
  if (!isPlainObject(value)) throw bad(arg, 'the file must hold a mapping of variable names to values');
  return value;
}

/** One -e argument. */
export function parseExtraVarsArg(arg: string, cwd = process.cwd()): Vars {
  const trimmed = arg.trim();
  if (trimmed === '') throw bad(arg, 'empty');
  if (trimmed.startsWith('@')) return parseFile(trimmed, cwd);
  if (trimmed.startsWith('{')) return parseInline(trimmed);
  return parseKeyValues(trimmed);
}

/**
 * One -e argument with where its values came from: a file (read again by `--resume`) or the
 * command line itself (to be given again: values are never stored).
 */
export type ExtraVarSource = { kind: 'file'; path: string; vars: Vars } | { kind: 'inline'; vars: Vars };

/** Every -e argument, parsed, in command-line order. */
export function extraVarSources(args: readonly string[], cwd = process.cwd()): ExtraVarSource[] {
  return args.map((a) => {
    const vars = parseExtraVarsArg(a, cwd);
    if (Object.hasOwn(vars, '__proto__')) throw bad(a, '"__proto__" is not a usable variable name');
    const t = a.trim();
    return t.startsWith('@') ? { kind: 'file', path: resolve(fileOf(t, cwd)), vars } : { kind: 'inline', vars };
  });
}

/** Sources merged in order, later winning key by key. */
export function mergeSources(sources: readonly ExtraVarSource[]): Vars {
  const out: Vars = {};
  for (const s of sources) assignVars(out, s.vars);
  return out;
}

/** All -e arguments in command-line order, merged (later wins). */
export function parseExtraVars(args: readonly string[], cwd = process.cwd()): Vars {
  return mergeSources(extraVarSources(args, cwd));
}
