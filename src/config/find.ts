// Where the project config file is, found as Ansible finds ansible.cfg: $TSBM_CONFIG (a file,
// or a directory holding tsbm.cfg), else tsbm.cfg in the working directory, else ~/.tsbm.cfg,
// else /etc/tsbm/tsbm.cfg. The first that exists is the only one read (files are not merged).
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { optionsError } from '../errors.js';

const CONFIG_NAME = 'tsbm.cfg';
const SYSTEM_CONFIG = '/etc/tsbm/tsbm.cfg';

export interface FindEnv {
  env: NodeJS.ProcessEnv;
  cwd: string;
  home: string;
}

export interface Found {
  file: string | undefined;
  /** Why a candidate was passed over (a world-writable working directory). */
  warnings: string[];
}

const here = (): FindEnv => ({ env: process.env, cwd: process.cwd(), home: homedir() });

function kind(p: string): 'file' | 'dir' | undefined {
  try {
    const s = statSync(p);
    return s.isDirectory() ? 'dir' : 'file';
  } catch {
    return undefined;
  }
}

/**
 * A tsbm.cfg in a directory anyone may write to could be planted by anyone (as Ansible, which
 * ignores ansible.cfg there): it is passed over, with a warning.
 */
function worldWritable(dir: string): boolean {
  try {
    return (statSync(dir).mode & 0o002) !== 0;
  } catch {
    return false;
  }
}

export function findConfigFile(where: FindEnv = here()): Found {
  const warnings: string[] = [];
  const named = where.env.TSBM_CONFIG?.trim();
  if (named) {
    const p = resolve(where.cwd, named);
    const k = kind(p);
    if (k === 'file') return { file: p, warnings };
    if (k === 'dir' && kind(join(p, CONFIG_NAME)) === 'file') return { file: join(p, CONFIG_NAME), warnings };
    throw optionsError(
      `TSBM_CONFIG names ${named}, which is ${k === 'dir' ? `a directory without ${CONFIG_NAME}` : 'not there'}`,
      'point TSBM_CONFIG at a tsbm.cfg file (or unset it to use ./tsbm.cfg or ~/.tsbm.cfg)',
    );
  }
  const local = join(where.cwd, CONFIG_NAME);
  if (kind(local) === 'file') {
    if (!worldWritable(where.cwd)) return { file: local, warnings };
    warnings.push(
      `${local} is not read: ${where.cwd} is writable by everyone, so anyone could have put it there (name it with TSBM_CONFIG to use it)`,
    );
  }
  for (const p of [join(where.home, `.${CONFIG_NAME}`), SYSTEM_CONFIG]) if (kind(p) === 'file') return { file: p, warnings };
  return { file: undefined, warnings };
}
