// The two per-packet / per-channel costs src/connection/ssh2-lib.ts mends in ssh2, checked
// against a real in-process SSH exchange (both sides are ssh2 here).
import crypto from 'node:crypto';
import { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedKeyObjects } from '../../src/connection/ssh2-keys.js';
import { openSsh, type SshConnection } from '../../src/connection/ssh.js';
import { pooledRandomBytesServed, pooledRandomFill } from '../../src/util/pooled-random.js';
import { type SshHost, startSshHost } from '../helpers/ssh-host.js';

describe('ssh2 as loaded through ssh2-lib', () => {
  let h: SshHost;
  let conn: SshConnection;
  beforeAll(async () => {
    h = await startSshHost();
    conn = await openSsh(h.spec);
  });
  afterAll(async () => {
    await conn?.close();
    await h?.close();
  });

  it('pads packets from the random pool while crypto.randomFillSync stays as it was', async () => {
    expect(crypto.randomFillSync).not.toBe(pooledRandomFill);
    const before = pooledRandomBytesServed();
    const r = await conn.exec(['echo', 'padded']);
    expect(r.stdout).toBe('padded\n');
    // Every packet carries 4 to 19 bytes of padding: a command is a dozen packets or more.
    expect(pooledRandomBytesServed() - before).toBeGreaterThan(40);
  });

  it('closes finished channels without calling end() again (no ERR_STREAM_ALREADY_FINISHED per command)', async () => {
    const end = Duplex.prototype.end;
    let endsAfterFinish = 0;
    Duplex.prototype.end = function (this: Duplex, ...args: unknown[]) {
      if (this.writableFinished) endsAfterFinish++;
      return (end as (...a: unknown[]) => Duplex).apply(this, args);
    } as typeof end;
    try {
      for (let i = 0; i < 3; i++) expect((await conn.exec(['true'])).rc).toBe(0);
      expect((await conn.exec(['cat'], { stdin: 'in' })).stdout).toBe('in');
      // The server side's channels close a moment after the client sees the exit.
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      Duplex.prototype.end = end;
    }
    expect(endsAfterFinish).toBe(0);
  });
});

describe('ssh2 signatures', () => {
  for (const keyType of ['ed25519', 'ecdsa', 'rsa'] as const) {
    it(`${keyType}: handshakes and logins sign and verify with one KeyObject per key`, async () => {
      const h = await startSshHost({ keyType });
      try {
        const before = cachedKeyObjects();
        for (let i = 0; i < 3; i++) {
          const c = await openSsh(h.spec);
          expect((await c.exec(['echo', keyType])).stdout).toBe(`${keyType}\n`);
          await c.close();
        }
        // The host key (private on the server, public on the client) and the client key
        // (private on the client, public on the server): four PEMs, whatever the login count.
        expect(cachedKeyObjects() - before).toBe(4);
      } finally {
        await h.close();
      }
    });
  }
});

describe('pooledRandomFill', () => {
  it('fills exactly the asked range and never hands out the same bytes twice', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const buf = Buffer.alloc(40);
      pooledRandomFill(buf, 8, 16);
      expect(buf.subarray(0, 8).equals(Buffer.alloc(8))).toBe(true);
      expect(buf.subarray(24).equals(Buffer.alloc(16))).toBe(true);
      const part = buf.subarray(8, 24).toString('hex');
      expect(seen.has(part)).toBe(false);
      seen.add(part);
    }
  });

  it('sends large fills and other views to crypto, with its checks', () => {
    const big = pooledRandomFill(Buffer.alloc(4096));
    expect(big.equals(Buffer.alloc(4096))).toBe(false);
    const words = pooledRandomFill(new Uint32Array(4));
    expect(words.some((w) => w !== 0)).toBe(true);
    expect(() => pooledRandomFill(Buffer.alloc(8), 4, 8)).toThrow();
  });
});
