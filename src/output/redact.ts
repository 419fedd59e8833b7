// The single redaction mechanism. Every output path (renderers, journal, JUnit, errors,
// remote argv logging) passes text and values through one Redactor.

import { MIN_SECRET_LENGTH, SecretIndex } from './secret-index.js';
import { UnsafeText } from '../util/unsafe-text.js';
import { setOwn } from '../util/own-property.js';

const SECRET_NAME = /(password|secret|token|pull_secret|passphrase|_pass)$/i;
export const MASK = '********';

// Every event's keys are tested on its way out: the same few hundred names, thousands of times.
const secretNames = new Map<string, boolean>();

/** True for variable names whose values are always treated as secrets. */
export function isSecretName(name: string): boolean {
  let secret = secretNames.get(name);
  if (secret === undefined) {
    secret = SECRET_NAME.test(name);
    if (secretNames.size < 10_000) secretNames.set(name, secret);
  }
  return secret;
}

export class Redactor {
  private readonly index = new SecretIndex();

  /** Register a value; returns it unchanged so callers can write `ctx.secret(x)` inline. */
  add(value: unknown): void {
    if (typeof value !== 'string' && typeof value !== 'number') return;
    const s = String(value);
    // Very short values would mask ordinary words; they are still kept out of argv by callers.
    if (s.length < MIN_SECRET_LENGTH) return;
    this.index.add(s);
    // Also catch the base64 forms a secret typically travels in (auth tokens, auth files).
    const b64 = Buffer.from(s).toString('base64');
    if (b64.length >= 4) this.index.add(b64);
  }

  /** Register every value under secret-looking names in a vars tree. */
  addFromVars(vars: unknown, depth = 0): void {
    if (depth > 20 || vars === null || typeof vars !== 'object') return;
    for (const [k, v] of Object.entries(vars as Record<string, unknown>)) {
      if (isSecretName(k)) this.addDeep(v);
      else this.addFromVars(v, depth + 1);
    }
  }

  private addDeep(v: unknown, depth = 0): void {
    if (depth > 20) return;
    if (typeof v === 'string' || typeof v === 'number') this.add(v);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) this.addDeep(x, depth + 1);
  }

  redact(text: string): string {
    if (this.index.size === 0) return text;
    return this.index.replaceAll(text, MASK);
  }

  /** Deep copy with secret strings masked and secret-named keys masked wholesale. */
  redactDeep<T>(value: T, depth = 0): T {
    if (depth > 50) return value;
    if (typeof value === 'string') return this.redact(value) as T;
    if (value instanceof UnsafeText) return this.redact(value.text) as T;
    if (Array.isArray(value)) return value.map((v) => this.redactDeep(v, depth + 1)) as T;
    if (value && typeof value === 'object' && !(value instanceof Buffer)) {
      const out: Record<string, unknown> = {};
      const src = value as Record<string, unknown>;
      for (const k of Object.keys(src)) {
        const v = src[k];
        setOwn(out, k, isSecretName(k) && v !== undefined && v !== null && v !== '' ? MASK : this.redactDeep(v, depth + 1));
      }
      return out as T;
    }
    return value;
  }
}
