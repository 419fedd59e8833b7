import { createHmac } from 'node:crypto';
import { appendFileSync, promises as fsp, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { sameFingerprint, sha256Fingerprint } from '../../src/connection/fingerprint.js';
import { appendKnownHost, hostPatternMatches, keyTypeOf, knownHostsName, lookupKnownHosts } from '../../src/connection/known-hosts.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();

const dir = scratch('tsbm-kh-');
const blob = (type: string, body: string) => {
  const t = Buffer.from(type);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(t.length);
  return Buffer.concat([len, t, Buffer.from(body)]);
};
const hashed = (name: string) => {
  const salt = Buffer.from('0123456789abcdefghij');
  return `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(name).digest('base64')}`;
};

describe('known_hosts', () => {
  it('names non-22 ports as [host]:port', () => {
    expect(knownHostsName('10.0.0.5', 22)).toBe('10.0.0.5');
    expect(knownHostsName('10.0.0.5', 2222)).toBe('[10.0.0.5]:2222');
  });

  it('matches plain, wildcard, negated and hashed patterns', () => {
    expect(hostPatternMatches('a,b,10.0.0.5', '10.0.0.5')).toBe(true);
    expect(hostPatternMatches('10.0.0.*', '10.0.0.5')).toBe(true);
    expect(hostPatternMatches('10.0.0.?', '10.0.0.55')).toBe(false);
    expect(hostPatternMatches('10.0.0.*,!10.0.0.5', '10.0.0.5')).toBe(false);
    expect(hostPatternMatches(hashed('[h]:2222'), '[h]:2222')).toBe(true);
    expect(hostPatternMatches(hashed('[h]:2222'), 'h')).toBe(false);
    expect(hostPatternMatches('[h]:2222', 'h')).toBe(false);
  });

  it('looks up entries with file:line, skipping comments, @cert-authority, and flags @revoked', async () => {
    const k1 = blob('ssh-ed25519', 'one');
    const k2 = blob('ecdsa-sha2-nistp256', 'two');
    const f = path.join(dir, 'kh1');
    writeFileSync(
      f,
      [
        '# comment',
        `other ssh-ed25519 ${k2.toString('base64')}`,
        `${hashed('node')} ssh-ed25519 ${k1.toString('base64')} comment here`,
        `@cert-authority node ssh-ed25519 ${k2.toString('base64')}`,
        `@revoked node ecdsa-sha2-nistp256 ${k2.toString('base64')}`,
        '',
      ].join('\n'),
    );
    const e = await lookupKnownHosts(f, 'node');
    expect(e.map((x) => [x.line, x.keyType, x.revoked])).toEqual([
      [3, 'ssh-ed25519', false],
      [5, 'ecdsa-sha2-nistp256', true],
    ]);
    expect(e[0]!.key.equals(k1)).toBe(true);
    expect(await lookupKnownHosts(path.join(dir, 'missing'), 'node')).toEqual([]);
  });

  it('appends a hashed entry that lookup finds again, reporting its line', async () => {
    const f = path.join(dir, 'kh2');
    writeFileSync(f, 'x ssh-ed25519 AAAA'); // no trailing newline
    const key = blob('ssh-ed25519', 'new');
    const line = await appendKnownHost(f, '[10.1.1.1]:22022', 'ssh-ed25519', key);
    expect(line).toBe(2);
    expect(readFileSync(f, 'utf8').split('\n')[1]).toMatch(/^\|1\|/);
    const e = await lookupKnownHosts(f, '[10.1.1.1]:22022');
    expect(e).toHaveLength(1);
    expect(e[0]!.key.equals(key)).toBe(true);
  });

  it('reads the key type from a wire-format blob; fingerprints compare leniently', () => {
    expect(keyTypeOf(blob('ssh-rsa', 'x'))).toBe('ssh-rsa');
    const fp = sha256Fingerprint(Buffer.from('abc'));
    expect(fp).toMatch(/^SHA256:[A-Za-z0-9+/]+$/);
    expect(sameFingerprint(fp, `${fp.slice(7)}=`)).toBe(true);
    expect(sameFingerprint(fp, 'SHA256:other')).toBe(false);
  });
});

describe('known_hosts lookups in a large file', () => {
  it('finds plain, wildcard and hashed entries in file order, case-insensitively', async () => {
    const f = path.join(dir, 'fleet_known_hosts');
    const lines = Array.from({ length: 3000 }, (_, i) => `[127.0.0.1]:${20000 + i} ssh-ed25519 ${Buffer.from(`k${i}`).toString('base64')}`);
    lines.splice(10, 0, `[127.0.0.1]:2*,!other ssh-rsa ${Buffer.from('glob').toString('base64')}`);
    lines.push(`${hashed('[127.0.0.1]:21234')} ecdsa-sha2-nistp256 ${Buffer.from('hashed').toString('base64')}`);
    lines.push(`[127.0.0.1]:21234,HOST.example ssh-ed25519 ${Buffer.from('second').toString('base64')}`);
    writeFileSync(f, `${lines.join('\n')}\n`);
    const hits = await lookupKnownHosts(f, '[127.0.0.1]:21234');
    expect(hits.map((h) => h.key.toString())).toEqual(['glob', 'k1234', 'hashed', 'second']);
    expect(hits.map((h) => h.line)).toEqual([11, 1236, 3002, 3003]);
    expect((await lookupKnownHosts(f, 'host.EXAMPLE')).map((h) => h.key.toString())).toEqual(['second']);
  });

  it('sees a rewrite at once, even one of the same size within the same clock tick', async () => {
    const f = path.join(dir, 'rewritten_known_hosts');
    writeFileSync(f, `h1 ssh-ed25519 ${Buffer.from('AAAA').toString('base64')}\n`);
    expect((await lookupKnownHosts(f, 'h1'))[0]!.key.toString()).toBe('AAAA');
    writeFileSync(f, `h1 ssh-ed25519 ${Buffer.from('BBBB').toString('base64')}\n`);
    expect((await lookupKnownHosts(f, 'h1'))[0]!.key.toString()).toBe('BBBB');
  });

  it('reads a settled file once, and again as soon as it changes', async () => {
    const f = path.join(dir, 'settled_known_hosts');
    writeFileSync(f, `h1 ssh-ed25519 ${Buffer.from('AAAA').toString('base64')}\n`);
    // Times at least two seconds old when read: from then on an unchanged stat means unchanged text.
    await new Promise((r) => setTimeout(r, 2100));
    const reads = vi.spyOn(fsp, 'readFile');
    try {
      expect((await lookupKnownHosts(f, 'h1'))[0]!.key.toString()).toBe('AAAA');
      expect((await lookupKnownHosts(f, 'h1'))[0]!.key.toString()).toBe('AAAA');
      expect((await lookupKnownHosts(f, 'h1'))[0]!.key.toString()).toBe('AAAA');
      expect(reads).toHaveBeenCalledTimes(1);
      appendFileSync(f, `h2 ssh-ed25519 ${Buffer.from('CCCC').toString('base64')}\n`);
      expect((await lookupKnownHosts(f, 'h2'))[0]!.key.toString()).toBe('CCCC');
      expect(reads).toHaveBeenCalledTimes(2);
    } finally {
      reads.mockRestore();
    }
  });
});
