// Helpers that read the controller's world: environment, files, clock, randomness, and the
// `secret` marker that registers a value for redaction.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { HelperFail } from '../fail.js';
import type { HelperDef } from './define.js';

export function expandHome(p: string): string {
  if (p === '~') return homedir();
  if (p.startsWith('~/')) return join(homedir(), p.slice(2));
  return p;
}

export const lookupHelpers: HelperDef[] = [
  {
    name: 'env',
    summary: 'an environment variable of the controller (error if unset, unless a default is given)',
    fn: (a) => {
      if (typeof a[0] !== 'string' || a[0] === '') throw new HelperFail('env', 'expects a variable name');
      const v = process.env[a[0]];
      if (v !== undefined) return v;
      if (a.length >= 2) return a[1];
      throw new HelperFail(
        'env',
        `environment variable ${a[0]} is not set`,
        `export ${a[0]}, or give a default: env '${a[0]}' 'value'`,
      );
    },
  },
  {
    name: 'file',
    summary:
      'contents of a controller file, relative to the playbook (~ expanded; trailing newlines removed)',
    fn: (a, ctx) => {
      if (typeof a[0] !== 'string' || a[0] === '') throw new HelperFail('file', 'expects a path');
      const p = expandHome(a[0]);
      const full = isAbsolute(p) ? p : resolve(ctx?.baseDir ?? process.cwd(), p);
      try {
        return readFileSync(full, 'utf8').replace(/\n+$/, '');
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        throw new HelperFail(
          'file',
          `cannot read ${full}: ${code === 'ENOENT' ? 'file not found' : (e as Error).message}`,
          'paths are relative to the playbook directory',
        );
      }
    },
  },
  {
    name: 'secret',
    summary: 'the value itself, registered for redaction in all output',
    fn: (a, ctx) => {
      const v = a[0];
      if ((typeof v === 'string' || typeof v === 'number') && ctx?.onSecret) ctx.onSecret(String(v));
      return v;
    },
  },
  { name: 'now', summary: 'the current time, ISO 8601 UTC', fn: () => new Date().toISOString() },
  { name: 'uuid', summary: 'a random UUID (v4)', fn: () => randomUUID() },
];
