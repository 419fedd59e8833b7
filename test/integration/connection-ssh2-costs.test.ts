// What src/connection/ssh2-lib.ts and ssh2-keys.ts mend in ssh2, against real in-process SSH
// exchanges (both sides are ssh2 here). The padding pool and the channel close are checked on
// the shared connection in connection-ssh.test.ts.
import { describe, expect, it } from 'vitest';
import { cachedKeyObjects } from '../../src/connection/ssh2-keys.js';
import { openSsh } from '../../src/connection/ssh.js';
import { pooledRandomFill } from '../../src/util/pooled-random.js';
import { startSshHost } from '../helpers/ssh-host.js';

describe('ssh2 signatures', () => {
  for (const keyType of ['ed25519', 'ecdsa', 'rsa'] as const) {
    it(`${keyType}: handshakes and logins sign and verify with one KeyObject per key`, async () => {
      const before = cachedKeyObjects();
      const h = await startSshHost({ keyType });
      try {
        // Both private keys got theirs when they were generated (a lab makes keys at start,
        // so its servers' first handshakes do not parse them).
        expect(cachedKeyObjects() - before).toBe(2);
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
