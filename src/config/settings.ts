// The settings in effect: each option of the table (options.ts) from its environment variable,
// else the config file, else its default, typed, with where it came from. Values are checked
// when the settings load, so a bad one is an error before a command does anything.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, resolve } from 'node:path';
import { formatPos, type SourcePos, TsbmError } from '../errors.js';
import { didYouMean } from '../schema/did-you-mean.js';
import { findConfigFile, type FindEnv } from './find.js';
import { type IniSections, parseIniConfig } from './ini-file.js';
import { CONFIG_OPTIONS, type ConfigOption, type OptionType, type OptionTypes, type SettingName, type SettingValue } from './options.js';

/** Where a value came from: `env TSBM_FORKS`, `tsbm.cfg:3`, or `default`. */
export type SettingSource = { kind: 'env'; name: string } | { kind: 'file'; pos: SourcePos } | { kind: 'default' };

interface Resolved {
  value: unknown;
  source: SettingSource;
}

export class Settings {
  private readonly values = new Map<SettingName, Resolved>();

  constructor(
    /** The config file read, if any. */
    readonly file: string | undefined,
    /** Things an operator should know (a config file passed over). */
    readonly warnings: readonly string[],
    values: Map<SettingName, Resolved>,
  ) {
    this.values = values;
  }

  /** The value in effect (undefined: not set anywhere and no default). */
  get<N extends SettingName>(name: N): SettingValue<N> | undefined {
    return this.values.get(name)?.value as SettingValue<N> | undefined;
  }

  /** The value only when it came from the config file (for settings whose variable is read elsewhere). */
  fromFile<N extends SettingName>(name: N): SettingValue<N> | undefined {
    const r = this.values.get(name);
    return r?.source.kind === 'file' ? (r.value as SettingValue<N>) : undefined;
  }

  source(name: SettingName): SettingSource {
    return this.values.get(name)?.source ?? { kind: 'default' };
  }
}

export function describeSource(s: SettingSource): string {
  if (s.kind === 'env') return `environment ${s.name}`;
  if (s.kind === 'file') return formatPos(s.pos).replace(/:\d+$/, '');
  return 'default';
}

const TRUE = new Set(['1', 'true', 'yes', 'on', 'y', 't']);
const FALSE = new Set(['0', 'false', 'no', 'off', 'n', 'f', '']);

const splitOn = (text: string, sep: string): string[] =>
  text
    .split(sep)
    .map((s) => s.trim())
    .filter(Boolean);

/** Text from the file or the environment as the option's type; `base` resolves relative paths. */
function convert(o: ConfigOption, text: string, base: string): OptionTypes[OptionType] {
  const path = (p: string) => resolve(base, p.startsWith('~/') ? `${homedir()}${p.slice(1)}` : p);
  switch (o.type) {
    case 'string':
      return text;
    case 'path':
      return path(text.trim());
    case 'pathlist':
      return splitOn(text, ',').map(path);
    case 'pathspec':
      return splitOn(text, delimiter).map(path);
    case 'list':
      return splitOn(text, ',');
    case 'int': {
      const s = text.trim();
      if (!/^\d+$/.test(s) || (o.min !== undefined && Number(s) < o.min)) {
        throw new Error(`must be a whole number${o.min !== undefined ? ` of at least ${o.min}` : ''}, got "${s}"`);
      }
      return Number(s);
    }
    case 'bool': {
      const s = text.trim().toLowerCase();
      if (TRUE.has(s)) return true;
      if (FALSE.has(s)) return false;
      throw new Error(`must be true or false, got "${text.trim()}"`);
    }
  }
}

function checkKnownKeys(sections: IniSections): void {
  const known = Object.values(CONFIG_OPTIONS) as ConfigOption[];
  for (const [section, entries] of sections) {
    const here = known.filter((o) => o.section === section);
    if (here.length === 0) {
      const sectionNames = [...new Set(known.map((o) => o.section))];
      const first = [...entries.values()][0];
      const near = didYouMean(section, sectionNames);
      throw new TsbmError('options', `unknown section [${section}] in the config file`, {
        ...(first ? { pos: { ...first.pos, line: Math.max(1, first.pos.line - 1) } } : {}),
        hint: near ? `did you mean [${near}]?` : `sections tsbm reads: ${sectionNames.map((s) => `[${s}]`).join(', ')} (tsbm config lists every setting)`,
      });
    }
    for (const [key, e] of entries) {
      if (here.some((o) => o.key === key)) continue;
      const near = didYouMean(key, here.map((o) => o.key));
      throw new TsbmError('options', `unknown setting "${key}" in [${section}]`, {
        pos: { ...e.pos, col: 1 },
        hint: near ? `did you mean "${near}"?` : '`tsbm config` lists every setting',
      });
    }
  }
}

/** Reads the environment and the config file (found as find.ts says) into Settings. */
export function loadSettings(where: FindEnv = { env: process.env, cwd: process.cwd(), home: homedir() }): Settings {
  const found = findConfigFile(where);
  let sections: IniSections = new Map();
  if (found.file) {
    let text: string;
    try {
      text = readFileSync(found.file, 'utf8');
    } catch (e) {
      throw new TsbmError('options', `cannot read the config file ${found.file}: ${(e as Error).message}`, {
        hint: 'fix its permissions, or set TSBM_CONFIG to another file',
      });
    }
    sections = parseIniConfig(text, found.file);
    checkKnownKeys(sections);
  }
  const values = new Map<SettingName, Resolved>();
  for (const [name, o] of Object.entries(CONFIG_OPTIONS) as Array<[SettingName, ConfigOption]>) {
    const env = where.env[o.env];
    if (env !== undefined && env.trim() !== '') {
      try {
        values.set(name, { value: convert(o, env, where.cwd), source: { kind: 'env', name: o.env } });
      } catch (e) {
        throw new TsbmError('options', `${o.env} ${(e as Error).message}`, { hint: `${o.description}` });
      }
      continue;
    }
    const entry = sections.get(o.section)?.get(o.key);
    if (entry && found.file) {
      try {
        values.set(name, { value: convert(o, entry.value, dirname(found.file)), source: { kind: 'file', pos: entry.pos } });
      } catch (e) {
        throw new TsbmError('options', `${o.key} ${(e as Error).message}`, { pos: entry.pos, hint: o.description });
      }
      continue;
    }
    if (o.default !== undefined) values.set(name, { value: o.default, source: { kind: 'default' } });
  }
  return new Settings(found.file, found.warnings, values);
}

let current: Settings | undefined;

/** The settings of this process (loaded on first use). */
export function settings(): Settings {
  current ??= loadSettings();
  return current;
}
