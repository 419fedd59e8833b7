// Serialisation helpers: JSON, YAML, base64.
import { stringify as yamlStringify } from 'yaml';
import { HelperFail } from '../fail.js';
import type { HelperDef } from './define.js';

export const dataHelpers: HelperDef[] = [
  {
    name: 'json',
    summary: 'serialise a value as JSON (optional indent)',
    fn: (a) => JSON.stringify(a[0] ?? null, null, typeof a[1] === 'number' ? a[1] : undefined),
  },
  {
    name: 'from_json',
    summary: 'parse a JSON string into a value',
    fn: (a) => {
      if (typeof a[0] !== 'string') throw new HelperFail('from_json', 'expects a string');
      try {
        return JSON.parse(a[0]);
      } catch (e) {
        throw new HelperFail('from_json', `invalid JSON: ${(e as Error).message}`, 'check the value is JSON');
      }
    },
  },
  { name: 'yaml', summary: 'serialise a value as YAML', fn: (a) => yamlStringify(a[0] ?? null) },
  {
    name: 'b64encode',
    summary: 'base64-encode a string (UTF-8)',
    fn: (a) => Buffer.from(String(a[0] ?? ''), 'utf8').toString('base64'),
  },
  {
    name: 'b64decode',
    summary: 'decode base64 into a UTF-8 string',
    fn: (a) => {
      const s = String(a[0] ?? '').replace(/\s+/g, '');
      if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(s)) throw new HelperFail('b64decode', 'not base64 input');
      return Buffer.from(s, 'base64').toString('utf8');
    },
  },
];
