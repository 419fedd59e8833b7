// The SSH connection against real OpenSSH in a network namespace: channel reuse under
// MaxSessions 10, SFTP put (posix-rename) and get, hashed known_hosts from ssh-keyscan,
// secret env kept off the command line, timeouts, a jump host into a namespace-only sshd,
// and facts from a real host.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSsh, type SshConnection } from '../../src/connection/ssh.js';
import type { ConnectionSpec } from '../../src/connection/types.js';
import { UnreachableError } from '../../src/errors.js';
import { factsModule } from '../../src/modules/facts/facts.js';
import { runModule, testContext } from '../helpers/ssh-module-context.js';
import { type Netns, createNetns, destroyAllNetns } from './lab/netns.js';
import { haveTool, isRoot, sh } from './lab/run.js';
import { type ClientKey, type Sshd, makeClientKey, prepareSshd, stopAllSshd } from './lab/sshd.js';

const ready =
  isRoot && ['ip', 'nsenter', 'ssh-keyscan', 'ssh-keygen'].every(haveTool) && haveTool('/usr/sbin/sshd');

describe.skipIf(!ready)(
  'ssh connection against real OpenSSH (needs root, iproute2, openssh-server)',
  { timeout: 120_000 },
  () => {
    let dir: string;
    let ns: Netns;
    let sshd: Sshd;
    let inner: Sshd;
    let key: ClientKey;
    let spec: ConnectionSpec;
    let conn: SshConnection;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'tsbm-openssh-'));
      ns = createNetns('conn', 3);
      key = makeClientKey(join(dir, 'client'));
      sshd = prepareSshd(ns, join(dir, 'sshd'), [key.publicKey]);
      // OpenSSH's default session cap, to prove the client never exceeds it.
      const cfg = join(sshd.dir, 'sshd_config');
      writeFileSync(cfg, readFileSync(cfg, 'utf8').replace('MaxSessions 50', 'MaxSessions 10'));
      sshd.start();
      // A second sshd only reachable inside the namespace (127.0.0.1:2222 there): needs the jump.
      inner = prepareSshd(ns, join(dir, 'inner'), [key.publicKey], 2222);
      const icfg = join(inner.dir, 'sshd_config');
      writeFileSync(
        icfg,
        readFileSync(icfg, 'utf8').replace(`ListenAddress ${ns.nsIp}`, 'ListenAddress 127.0.0.1'),
      );
      inner.start();
      // known_hosts the OpenSSH way: ssh-keyscan, then hashed by ssh-keygen -H.
      const kh = join(dir, 'known_hosts');
      const scan = sh(['ssh-keyscan', '-t', 'ed25519', '-p', '22', ns.nsIp]).stdout;
      const innerPub = inner.hostKeyPub.split(/\s+/);
      writeFileSync(kh, `${scan}[127.0.0.1]:2222 ${innerPub[0]} ${innerPub[1]}\n`);
      sh(['ssh-keygen', '-H', '-f', kh]);
      spec = {
        host: 'real1',
        connection: 'ssh',
        address: ns.nsIp,
        port: 22,
        user: 'root',
        privateKeyFile: key.privateKeyFile,
        knownHostsFile: kh,
        hostKeyChecking: 'strict',
        connectTimeoutMs: 5000,
        agent: false,
      };
      conn = await openSsh(spec);
    });

    afterAll(async () => {
      await conn?.close();
      stopAllSshd();
      destroyAllNetns();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('verifies the host against a hashed known_hosts and runs 24 parallel execs (more than MaxSessions) on one connection', async () => {
      expect(readFileSync(spec.knownHostsFile!, 'utf8')).toMatch(/^\|1\|/);
      const rs = await Promise.all(
        Array.from({ length: 24 }, (_, i) => conn.exec(['sh', '-c', `echo ${i}; sleep 0.2`])),
      );
      expect(rs.map((r) => r.stdout.trim())).toEqual(Array.from({ length: 24 }, (_, i) => String(i)));
      expect(conn.handshakes).toBe(1);
    });

    it('puts atomically with mode over SFTP (also replacing) and gets back', async () => {
      const dest = join(dir, 'remote.txt');
      await conn.put('one', dest, { mode: 0o600 });
      await conn.put('two', dest, { mode: 0o640 });
      expect(readFileSync(dest, 'utf8')).toBe('two');
      expect(statSync(dest).mode & 0o777).toBe(0o640);
      expect((await conn.get(dest)).toString()).toBe('two');
      // Pipelined chunks (a small file is written in 16 KiB WRITEs sent back to back).
      const mid = randomBytes(200 * 1024 + 5);
      await conn.put(mid, dest, { mode: 0o600 });
      expect(readFileSync(dest).equals(mid)).toBe(true);
      expect(statSync(dest).mode & 0o777).toBe(0o600);
    });

    it('passes env, keeps secret env off the command line, and honours cwd', async () => {
      const r = await conn.exec(['sh', '-c', 'pwd; echo "$A|$DB_PASSWORD"'], {
        cwd: dir,
        env: { A: 'x y', DB_PASSWORD: 'pw-very-secret' },
      });
      expect(r.stdout).toBe(`${dir}\nx y|pw-very-secret\n`);
      // What sshd logged as the command would be argv of the session; check what we sent instead.
      const seen: string[] = [];
      const c = await openSsh(spec, { onCommand: (_h, cmd) => seen.push(cmd) });
      await c.exec(['true'], { env: { DB_PASSWORD: 'pw-very-secret' } });
      await c.close();
      expect(seen.join('\n')).not.toContain('pw-very-secret');
    });

    it('kills a command on timeout', async () => {
      const pidFile = join(dir, 'sleep.pid');
      await expect(
        conn.exec(['sh', '-c', `echo $$ > ${pidFile}; exec sleep 30`], { timeout: 2500 }),
      ).rejects.toThrow(/timed out/);
      const pid = readFileSync(pidFile, 'utf8').trim();
      await new Promise((r) => setTimeout(r, 500));
      let state = 'gone';
      try {
        state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2]!;
      } catch {
        // exited and reaped
      }
      expect(['gone', 'Z']).toContain(state);
    });

    it("kills a script's children on timeout too, under the host's /bin/sh (dash here)", async () => {
      // The kill goes to the process group: a script's own children (not exec'd) must die too.
      const childFile = join(dir, 'child.pid');
      await expect(conn.execShell(`sleep 31 & echo $! > ${childFile}; wait`, { timeout: 2500 })).rejects.toThrow(/timed out/);
      const child = readFileSync(childFile, 'utf8').trim();
      await new Promise((r) => setTimeout(r, 500));
      let state = 'gone';
      try {
        state = readFileSync(`/proc/${child}/stat`, 'utf8').split(' ')[2]!;
      } catch {
        // exited and reaped
      }
      expect(['gone', 'Z']).toContain(state);
    });

    it('reaches an sshd only listening inside the namespace through a jump host', async () => {
      const c = await openSsh({
        ...spec,
        host: 'inner',
        address: '127.0.0.1',
        port: 2222,
        jump: `root@${ns.nsIp}:22`,
      });
      const r = await c.exec(['echo', 'inside']);
      expect(r.stdout).toBe('inside\n');
      await c.close();
    });

    it('refuses a changed host key', async () => {
      const kh = join(dir, 'bad_known_hosts');
      writeFileSync(kh, `${ns.nsIp} ${inner.hostKeyPub.split(/\s+/).slice(0, 2).join(' ')}\n`);
      const err = await openSsh({ ...spec, knownHostsFile: kh }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnreachableError);
      expect((err as Error).message).toMatch(/host key mismatch/);
    });

    it('gathers facts from the real host, including the namespace MAC', async () => {
      const r = await runModule(factsModule, testContext(conn).ctx, {});
      const f = r.facts as { macs: string[]; memory: { total_mb: number }; disks: unknown[] };
      expect(f.macs).toContain(ns.mac);
      expect(f.memory.total_mb).toBeGreaterThan(0);
      expect(f.disks.length).toBeGreaterThan(0);
    });
  },
);
