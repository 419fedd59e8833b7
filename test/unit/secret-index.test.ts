// The redactor's literal index: same answer as a longest-first regular-expression alternation
// (the obvious reference), for any set of secrets and any text.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MASK, Redactor } from '../../src/output/redact.js';
import { SecretIndex } from '../../src/output/secret-index.js';

function reference(secrets: string[], text: string, mask: string): string {
  const kept = [...new Set(secrets.filter((s) => s.length >= 3))].sort((a, b) => b.length - a.length);
  if (kept.length === 0) return text;
  const re = new RegExp(kept.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  return text.replace(re, mask);
}

describe('SecretIndex', () => {
  it('matches a longest-first alternation on random secrets and texts', () => {
    const alphabet = fc.constantFrom('a', 'b', 'c', 'é', '$', '.', '\n', '🔑');
    const word = fc.array(alphabet, { minLength: 0, maxLength: 8 }).map((a) => a.join(''));
    fc.assert(
      fc.property(fc.array(word, { maxLength: 12 }), fc.array(fc.oneof(word, alphabet), { maxLength: 30 }), (secrets, parts) => {
        const text = parts.join('');
        const idx = new SecretIndex();
        for (const s of secrets) idx.add(s);
        expect(idx.replaceAll(text, '*')).toBe(reference(secrets, text, '*'));
      }),
      { numRuns: 2000 },
    );
  });

  it('prefers the longer of two secrets that share a prefix, whichever was added first', () => {
    for (const order of [['tok', 'token-123'], ['token-123', 'tok']]) {
      const idx = new SecretIndex();
      for (const s of order) idx.add(s);
      expect(idx.replaceAll('x token-123 tok y', '#')).toBe('x # # y');
    }
  });

  it('masks every one of thousands of per-host session tokens', () => {
    const r = new Redactor();
    const tokens = Array.from({ length: 3000 }, (_, i) => `sess-${i.toString(36)}-${(i * 7919).toString(16)}`);
    for (const t of tokens) r.add(t);
    const text = tokens.map((t, i) => `host${i} X-Auth-Token: ${t};`).join(' ');
    const out = r.redact(text);
    for (const t of tokens) expect(out).not.toContain(t);
    expect(out.split(MASK).length - 1).toBe(tokens.length);
    // Their base64 forms (auth files, Basic headers) too.
    expect(r.redact(Buffer.from(tokens[1234]!).toString('base64'))).toBe(MASK);
  });
});
