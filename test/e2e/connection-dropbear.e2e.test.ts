// ssh2 (tsbm's SSH client) against a real dropbear (Debian's dropbear-bin 2022.83) in a network
// namespace, as on a minimal ramdisk: key exchange and host-key algorithm negotiation,
// known_hosts and ssh_host_key_fingerprint pinning with dropbear's host keys, and file
// transfer where dropbear runs a missing sftp-server (smart falls back to piped).
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Fingerprint } from '../../src/connection/fingerprint.js';
import { Client } from '../../src/connection/ssh2-lib.js';
import { openSsh, type SshConnection } from '../../src/connection/ssh.js';
import type { ConnectionSpec } from '../../src/connection/types.js';
import { UnreachableError } from '../../src/errors.js';
import { type DropbearKeyType, prepareDropbear } from './lab/dropbear.js';
import { type Netns, createNetns, destroyAllNetns } from './lab/netns.js';
import { haveTool, isRoot, sh } from './lab/run.js';
import { type ClientKey, type Sshd, makeClientKey, stopAllSshd } from './lab/sshd.js';

const require = createRequire(import.meta.url);
const ssh2Constants = require('ssh2/lib/protocol/constants.js') as { SUPPORTED_KEX: string[]; DEFAULT_KEX: string[] };

const ready = isRoot && ['ip', 'nsenter', 'unshare', 'dropbear', 'dropbearkey', 'ssh-keygen'].every(haveTool);
const MiB = 1024 * 1024;
const PORTS: Record<DropbearKeyType, number> = { ed25519: 22, ecdsa: 2222, rsa: 2223 };

interface Negotiated {
  kex: string;
  serverHostKey: string;
  cs: { cipher: string; mac: string };
}

/** A bare ssh2 handshake (host key accepted unseen), with the algorithms ssh2 may offer narrowed. */
function handshake(
  host: string,
  port: number,
  key: ClientKey,
  algorithms: Record<string, string[]> = {},
): Promise<Negotiated> {
  return new Promise((resolve, reject) => {
    const c = new Client();
    let neg: Negotiated | undefined;
    c.on('handshake', (n: Negotiated) => {
      neg = n;
    });
    c.on('ready', () => {
      c.end();
      resolve(neg as Negotiated);
    });
    c.on('error', (e: Error) => reject(e));
    c.connect({
      host,
      port,
      username: 'root',
      privateKey: readFileSync(key.privateKeyFile),
      hostVerifier: () => true,
      readyTimeout: 10_000,
      algorithms: algorithms as never,
    });
  });
}

describe.skipIf(!ready)(
  'ssh2 against real dropbear (needs root, iproute2, util-linux unshare, dropbear-bin)',
  { timeout: 180_000 },
  () => {
    let dir: string;
    let ns: Netns;
    let key: ClientKey;
    const servers = new Map<DropbearKeyType, Sshd>();
    let conn: SshConnection;
    let spec: ConnectionSpec;
    let files: string;

    const specFor = (t: DropbearKeyType, extra: Partial<ConnectionSpec> = {}): ConnectionSpec => {
      const s = servers.get(t)!;
      const kh = join(dir, `known_hosts_${t}`);
      writeFileSync(kh, `${s.knownHostsLine}\n`);
      return {
        host: `dropbear-${t}`,
        connection: 'ssh',
        address: s.address,
        port: s.port,
        user: 'root',
        privateKeyFile: key.privateKeyFile,
        knownHostsFile: kh,
        hostKeyChecking: 'strict',
        connectTimeoutMs: 10_000,
        agent: false,
        ...extra,
      };
    };

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'tsbm-dropbear-'));
      files = join(dir, 'files');
      sh(['mkdir', '-p', files]);
      ns = createNetns('drop', 5);
      key = makeClientKey(join(dir, 'client'));
      for (const t of ['ed25519', 'ecdsa', 'rsa'] as const) {
        const s = prepareDropbear(ns, join(dir, `dropbear-${t}`), [key.publicKey], {
          port: PORTS[t],
          keyType: t,
          logCommands: true,
        });
        s.start();
        servers.set(t, s);
      }
      spec = specFor('ed25519');
      conn = await openSsh(spec);
    });

    afterAll(async () => {
      await conn?.close();
      stopAllSshd();
      destroyAllNetns();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('is dropbear answering (the lab is what it claims)', async () => {
      // The session's parent is the wrapper's shell; the server process is dropbear itself.
      const tree = await conn.exec(['sh', '-c', 'p=$PPID; while [ "$p" -gt 1 ]; do cat /proc/$p/comm; p=$(cut -d" " -f4 /proc/$p/stat); done']);
      expect(tree.stdout.split('\n')).toContain('dropbear');
    });

    it('host-key algorithms: ed25519, ecdsa and rsa host keys verified against known_hosts, rsa signed with SHA-2', async () => {
      const expected: Record<DropbearKeyType, RegExp> = {
        ed25519: /^ssh-ed25519$/,
        ecdsa: /^ecdsa-sha2-nistp(256|384|521)$/,
        rsa: /^rsa-sha2-(256|512)$/,
      };
      for (const t of ['ed25519', 'ecdsa', 'rsa'] as const) {
        const c = await openSsh(specFor(t));
        try {
          expect((await c.exec(['echo', t])).stdout).toBe(`${t}\n`);
        } finally {
          await c.close();
        }
        const s = servers.get(t)!;
        const n = await handshake(s.address, s.port, key);
        expect(n.serverHostKey, t).toMatch(expected[t]);
      }
      // ssh-rsa (SHA-1 signatures) still works when it is all a client offers.
      const rsa = servers.get('rsa')!;
      expect((await handshake(rsa.address, rsa.port, key, { serverHostKey: ['ssh-rsa'] })).serverHostKey).toBe('ssh-rsa');
    });

    it('key exchange: the defaults negotiate curve25519, and every method both sides have completes', async () => {
      const s = servers.get('ed25519')!;
      const n = await handshake(s.address, s.port, key);
      expect(n.kex).toMatch(/^curve25519-sha256(@libssh\.org)?$/);
      expect(n.cs.cipher).toMatch(/^(chacha20-poly1305@openssh\.com|aes(128|256)-(ctr|gcm@openssh\.com))$/);
      if (process.env.TSBM_E2E_SHOW) console.log('dropbear default negotiation', JSON.stringify(n));
      const ok: string[] = [];
      const refused: string[] = [];
      for (const kex of ssh2Constants.SUPPORTED_KEX) {
        try {
          const r = await handshake(s.address, s.port, key, { kex: [kex] });
          expect(r.kex).toBe(kex);
          ok.push(kex);
        } catch {
          refused.push(kex);
        }
      }
      // What Debian 12's dropbear 2022.83 shares with ssh2 (docs/ramdisk.md lists the same): no
      // DH group exchange, no groups 15-18, no group1.
      expect(ok.sort()).toEqual(
        [
          'curve25519-sha256',
          'curve25519-sha256@libssh.org',
          'diffie-hellman-group14-sha1',
          'diffie-hellman-group14-sha256',
          'ecdh-sha2-nistp256',
          'ecdh-sha2-nistp384',
          'ecdh-sha2-nistp521',
        ].sort(),
      );
      expect(refused).toContain('diffie-hellman-group-exchange-sha256');
      // ssh2's default offer (no SHA-1) shares six of them with dropbear.
      expect(ssh2Constants.DEFAULT_KEX.filter((k) => ok.includes(k))).toHaveLength(6);
    });

    it('ssh_host_key_fingerprint pins each dropbear key (no known_hosts needed); a wrong pin is refused naming both', async () => {
      const empty = join(dir, 'known_hosts_empty');
      writeFileSync(empty, '');
      for (const t of ['ed25519', 'ecdsa', 'rsa'] as const) {
        const s = servers.get(t)!;
        const blob = Buffer.from(s.hostKeyPub.split(/\s+/)[1] as string, 'base64');
        const fp = sha256Fingerprint(blob);
        // The same fingerprint OpenSSH's ssh-keygen shows for that key.
        const pub = join(dir, `${t}.pub`);
        writeFileSync(pub, `${s.hostKeyPub}\n`);
        expect(sh(['ssh-keygen', '-l', '-E', 'sha256', '-f', pub]).stdout).toContain(fp);
        const c = await openSsh(specFor(t, { knownHostsFile: empty, hostKeyFingerprint: fp }));
        try {
          expect((await c.exec(['true'])).rc).toBe(0);
        } finally {
          await c.close();
        }
      }
      const wrong = sha256Fingerprint(randomBytes(51));
      const real = sha256Fingerprint(Buffer.from(servers.get('ed25519')!.hostKeyPub.split(/\s+/)[1] as string, 'base64'));
      const err = await openSsh(specFor('ed25519', { knownHostsFile: empty, hostKeyFingerprint: wrong })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnreachableError);
      expect((err as Error).message).toContain(real);
      expect((err as Error).message).toContain(wrong);
      expect((err as Error).message).toMatch(/ssh_host_key_fingerprint pins/);
    });

    it('files without SFTP: smart falls back to piped once; modes, every byte value, 40 MiB, get', async () => {
      const bytes = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 131) % 256));
      await conn.put(bytes, join(files, 'bytes.bin'), { mode: 0o600 });
      expect(conn.transport).toBe('piped');
      expect(readFileSync(join(files, 'bytes.bin')).equals(bytes)).toBe(true);
      expect(statSync(join(files, 'bytes.bin')).mode & 0o777).toBe(0o600);
      expect((await conn.get(join(files, 'bytes.bin'))).equals(bytes)).toBe(true);
      const big = randomBytes(40 * MiB);
      await conn.put(big, join(files, 'big.bin'), { mode: 0o755 });
      const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
      expect(sha(readFileSync(join(files, 'big.bin')))).toBe(sha(big));
      expect(statSync(join(files, 'big.bin')).mode & 0o777).toBe(0o755);
      expect(sha(await conn.get(join(files, 'big.bin')))).toBe(sha(big));
      await conn.put(Readable.from([big.subarray(0, 5 * MiB), big.subarray(5 * MiB, 9 * MiB)]), join(files, 'stream.bin'));
      expect(sha(readFileSync(join(files, 'stream.bin')))).toBe(sha(big.subarray(0, 9 * MiB)));
      // dropbear accepted the SFTP request once and ran the missing server; the wrapper saw it.
      const log = readFileSync(servers.get('ed25519')!.commandsLog, 'utf8');
      expect(log.split('\n').filter((l) => l.endsWith('sftp-server'))).toHaveLength(1);
      expect(log).not.toContain('\u00ff');
    });

    it('a transfer cut off mid-way (the session killed): nothing under the final name, and the remote side removes its temp file', async () => {
      const f = join(files, 'cut.bin');
      writeFileSync(f, 'previous');
      const c = await openSsh(spec);
      try {
        const src = new Readable({ read() {} });
        const put = c.put(src, f).catch((e: unknown) => e);
        for (let i = 0; i < 6; i++) src.push(randomBytes(MiB));
        const temp = () => readdirSync(files).filter((n) => n.startsWith('.cut.bin.tsbm-'));
        for (let i = 0; i < 200 && !(temp().length && statSync(join(files, temp()[0]!)).size >= 2 * MiB); i++) {
          await new Promise((r) => setTimeout(r, 25));
        }
        expect(temp()).toHaveLength(1);
        // Kill the dropbear process serving this connection (a child of the listener).
        const master = readFileSync(join(servers.get('ed25519')!.dir, 'dropbear.pid'), 'utf8').trim();
        const kids = sh(['pgrep', '-P', master], { allowFail: true }).stdout.trim().split('\n').filter(Boolean);
        expect(kids.length).toBeGreaterThan(0);
        // The newest session is this one (the shared connection above is older).
        const newest = kids.map(Number).sort((a, b) => a - b).at(-1)!;
        process.kill(newest, 'SIGKILL');
        expect(await put).toBeInstanceOf(UnreachableError);
        expect(readFileSync(f, 'utf8')).toBe('previous');
        // The remote script saw its input end short and removed the temp file.
        for (let i = 0; i < 100 && temp().length; i++) await new Promise((r) => setTimeout(r, 50));
        expect(temp()).toEqual([]);
      } finally {
        await c.close();
      }
    });

    it('sftp forced against dropbear without an sftp-server: a clear error naming the setting', async () => {
      const c = await openSsh({ ...spec, transferMethod: 'sftp' });
      try {
        const e = (await c.put('x', join(files, 'forced')).catch((x: unknown) => x)) as Error & { hint?: string };
        expect(e.message).toMatch(/cannot start SFTP on dropbear-ed25519: .*exit code 127/);
        expect(e.hint).toMatch(/set ssh_transfer_method: smart \(or piped\)/);
        expect(existsSync(join(files, 'forced'))).toBe(false);
      } finally {
        await c.close();
      }
    });
  },
);
