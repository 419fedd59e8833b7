// Extra vars are recorded by name with a hash, never a value, so a resume can tell that it got
// the same values again without the journal holding a password. The hash is scrypt (slow and
// memory-hard) over the name and the value, salted per run: a journal's hashes cannot be looked
// up in a precomputed table, and guessing even a weak password costs tens of milliseconds and
// 16 MiB per try, per variable, per run.
import { randomBytes, scrypt } from 'node:crypto';
import type { Vars } from '../types.js';

const COST = { N: 1 << 14, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const BYTES = 24;

export function newSalt(): string {
  return randomBytes(16).toString('hex');
}

/** JSON with object keys sorted, so `{a, b}` and `{b, a}` hash alike. */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function hashOne(name: string, value: unknown, salt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    scrypt(`${name}\0${stableJson(value)}`, `tsbm-extra-vars\0${salt}`, BYTES, COST, (err, key) =>
      err ? reject(err) : resolve(key.toString('base64url')),
    );
  });
}

/** name -> hash for every variable (computed side by side on libuv's thread pool). */
export async function hashVars(vars: Vars, salt: string): Promise<Record<string, string>> {
  const names = Object.keys(vars).sort();
  const hashes = await Promise.all(names.map((n) => hashOne(n, vars[n], salt)));
  return Object.fromEntries(names.map((n, i) => [n, hashes[i]!]));
}
