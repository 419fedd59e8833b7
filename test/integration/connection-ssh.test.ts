import { spawn } from 'node:child_process';
import nodeCrypto, { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Duplex, Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnreachableError } from '../../src/errors.js';
import { connectionFactory } from '../../src/connection/factory.js';
import { ConnectionPool } from '../../src/executor/connection-pool.js';
import { execSteps } from '../../src/connection/exec-steps.js';
import { INLINE_PID_PRELUDE, PID_PRELUDE, SH_SCRIPT_PID_PRELUDE, stripPidPrelude } from '../../src/connection/remote-pid.js';
import { openSsh, SshConnection } from '../../src/connection/ssh.js';
import { shellExecHandler } from '../../packages/lab/src/ssh/exec.js';
import { pooledRandomBytesServed, pooledRandomFill } from '../../src/util/pooled-random.js';
import { type SshHost, generateKey, startSshHost } from '../helpers/ssh-host.js';
import { scratchDirs } from '../helpers/scratch.js';
import { fakeLab } from '../helpers/fake-connection.js';

const scratch = scratchDirs();

// Dead or a zombie waiting to be reaped (in containers PID 1 may reap late).
function isAlive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] !== 'Z';
  } catch {
    return false;
  }
}

/** An in-process SSH host whose commands see SHELL=`shell`; `raw` records the command lines it received. */
async function hostWithLoginShell(shell: string): Promise<{ s: SshHost; raw: string[] }> {
  const raw: string[] = [];
  const run = shellExecHandler({ env: { ...process.env, SHELL: shell } });
  const s = await startSshHost({
    exec: (command, session) => {
      raw.push(command);
      return run(command, session);
    },
  });
  return { s, raw };
}

const tmp = scratch('tsbm-conn-');

describe('ssh connection against the in-process server', () => {
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

  it('runs argv with exit codes, stdout and stderr', async () => {
    const r = await conn.exec(['sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(r).toMatchObject({ rc: 3, stdout: 'out\n', stderr: 'err\n' });
    const q = await conn.exec(['printf', '%s|', "it's", '$HOME', 'a b']);
    expect(q.stdout).toBe("it's|$HOME|a b|");
  });

  it('reuses one TCP connection (one handshake) for 50 execs, even in parallel', async () => {
    const before = h.server.connections;
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => conn.exec(['echo', String(i)])));
    expect(results.map((r) => r.stdout.trim())).toEqual(Array.from({ length: 50 }, (_, i) => String(i)));
    expect(h.server.connections).toBe(before);
    expect(conn.handshakes).toBe(1);
  });

  it('pipes stdin and streams output', async () => {
    const chunks: string[] = [];
    const r = await conn.exec(['cat'], { stdin: 'hello\nworld\n', onStdout: (c) => chunks.push(c.toString()) });
    expect(r.stdout).toBe('hello\nworld\n');
    expect(chunks.join('')).toBe('hello\nworld\n');
    const s = await conn.exec(['wc', '-c'], { stdin: Readable.from([Buffer.from('abcd')]) });
    expect(s.stdout.trim()).toBe('4');
  });

  it('applies cwd and env through quoting, and keeps secret env off the command line', async () => {
    const dir = mkdtempSync(path.join(tmp, "we ird'dir-"));
    const r = await conn.exec(['sh', '-c', 'pwd; echo "$PLAIN"; echo "$API_TOKEN"'], {
      cwd: dir,
      env: { PLAIN: 'a b $c', API_TOKEN: 's3cr3t-value' },
    });
    expect(r.stdout).toBe(`${dir}\na b $c\ns3cr3t-value\n`);
    const last = h.commands.at(-1)!;
    expect(last).toContain('PLAIN=');
    expect(last).not.toContain('s3cr3t-value');
    // The command's own stdin follows the secret lines untouched.
    const both = await conn.exec(['sh', '-c', 'echo "$DB_PASSWORD"; cat'], { env: { DB_PASSWORD: 'pw-1234' }, stdin: 'line1\nline2' });
    expect(both.stdout).toBe('pw-1234\nline1\nline2');
  });

  it('prefixes become with sudo -n', async () => {
    // No sudo needed: the server records the command; we only check the wrapping.
    await conn.exec(['id', '-u'], { become: { user: 'postgres' } }).catch(() => undefined);
    expect(h.commands.at(-1)).toBe('sudo -n -u postgres -- id -u');
    await conn.exec(['true'], { become: {} }).catch(() => undefined);
    expect(h.commands.at(-1)).toBe('sudo -n -- true');
  });

  it('kills the remote process on timeout and rejects clearly', async () => {
    const pidFile = path.join(tmp, 'sleep.pid');
    await expect(conn.exec(['sh', '-c', `echo $$ > ${pidFile}; exec sleep 30`], { timeout: 300 })).rejects.toThrow(
      /timed out after 300 ms/,
    );
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await new Promise((r) => setTimeout(r, 300));
    expect(isAlive(pid)).toBe(false);
    // The connection is still usable.
    expect((await conn.exec(['echo', 'ok'])).stdout).toBe('ok\n');
  });

  it('aborts via AbortSignal', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('stop now')), 200);
    await expect(conn.exec(['sleep', '30'], { signal: ac.signal })).rejects.toThrow('stop now');
  });

  it('once the login shell reports itself POSIX, it runs the PID prelude itself (one process less), still killable', async () => {
    const { s, raw } = await hostWithLoginShell('/bin/sh');
    const c = await openSsh(s.spec);
    try {
      const signal = new AbortController().signal;
      expect((await c.exec(['echo', 'one'], { signal })).stdout).toBe('one\n');
      expect((await c.exec(['echo', 'two'], { signal })).stdout).toBe('two\n');
      expect(raw.map((r) => (r.startsWith(PID_PRELUDE) ? 'sh -c' : r.startsWith(INLINE_PID_PRELUDE) ? 'inline' : r))).toEqual([
        'sh -c',
        'inline',
      ]);
      const pidFile = path.join(tmp, 'inline-sleep.pid');
      await expect(c.exec(['sh', '-c', `echo $$ > ${pidFile}; exec sleep 30`], { timeout: 300 })).rejects.toThrow(/timed out/);
      await new Promise((r) => setTimeout(r, 300));
      expect(isAlive(Number(readFileSync(pidFile, 'utf8')))).toBe(false);
      expect((await c.exec(['sh', '-c', 'echo err >&2; exit 3'], { signal })).stderr).toBe('err\n');
    } finally {
      await c.close();
      await s.close();
    }
  });

  it('a batch of steps runs in a POSIX login shell itself (no sh -c), and a timeout kills every step', async () => {
    const { s, raw } = await hostWithLoginShell('/bin/sh');
    const c = await openSsh(s.spec);
    try {
      const signal = new AbortController().signal;
      await c.exec(['true'], { signal }); // learns the login shell
      const r = await execSteps(c, [['echo', 'a'], ['sh', '-c', 'echo b >&2; exit 4']], { signal });
      expect(r).toEqual([
        { rc: 0, stdout: 'a\n', stderr: '' },
        { rc: 4, stdout: '', stderr: 'b\n' },
      ]);
      const batch = stripPidPrelude(raw[1] ?? '');
      expect(raw[1]?.startsWith(INLINE_PID_PRELUDE)).toBe(false);
      expect(batch.startsWith('echo a </dev/null;')).toBe(true);
      const pidFile = path.join(tmp, 'batch-sleep.pid');
      await expect(
        execSteps(c, [['true'], ['sh', '-c', `echo $$ > ${pidFile}; exec sleep 30`]], { timeout: 400 }),
      ).rejects.toThrow(/timed out/);
      await new Promise((r) => setTimeout(r, 300));
      expect(isAlive(Number(readFileSync(pidFile, 'utf8')))).toBe(false);
      // Before the login shell is known, or for it not POSIX, a batch is its own sh -c.
      const fresh = await openSsh(s.spec);
      try {
        expect((await execSteps(fresh, [['echo', 'x']], { signal }))[0]?.stdout).toBe('x\n');
        expect(stripPidPrelude(raw[raw.length - 1] ?? '').startsWith('sh -c ')).toBe(true);
      } finally {
        await fresh.close();
      }
    } finally {
      await c.close();
      await s.close();
    }
  });

  it("a connection's first batch learns the login shell in its own sh -c: the next command runs inline", async () => {
    const { s, raw } = await hostWithLoginShell('/bin/sh');
    const c = await openSsh(s.spec);
    try {
      // Not killable and the first on the connection: one sh -c, whose report is not in stderr.
      const r = await execSteps(c, [['echo', 'a'], ['sh', '-c', 'echo b >&2']]);
      expect(r).toEqual([
        { rc: 0, stdout: 'a\n', stderr: '' },
        { rc: 0, stdout: '', stderr: 'b\n' },
      ]);
      expect(raw[0]?.startsWith(SH_SCRIPT_PID_PRELUDE)).toBe(true);
      expect(stripPidPrelude(raw[0] ?? '').startsWith("sh -c 'echo a </dev/null;")).toBe(true);
      const signal = new AbortController().signal;
      expect((await c.exec(['echo', 'next'], { signal })).stdout).toBe('next\n');
      expect(raw[1]?.startsWith(INLINE_PID_PRELUDE)).toBe(true);
    } finally {
      await c.close();
    }
    // A first batch with a timeout is still killed through its reported process group.
    const fresh = await openSsh(s.spec);
    try {
      const pidFile = path.join(tmp, 'first-batch-sleep.pid');
      await expect(
        execSteps(fresh, [['true'], ['sh', '-c', `echo $$ > ${pidFile}; exec sleep 30`]], { timeout: 400 }),
      ).rejects.toThrow(/timed out/);
      expect(raw.find((r) => r.includes(pidFile))?.startsWith(SH_SCRIPT_PID_PRELUDE)).toBe(true);
      await new Promise((r) => setTimeout(r, 300));
      expect(isAlive(Number(readFileSync(pidFile, 'utf8')))).toBe(false);
    } finally {
      await fresh.close();
      await s.close();
    }
  });

  it('keeps the sh -c prelude for a login shell that is not POSIX', async () => {
    const { s, raw } = await hostWithLoginShell('/usr/bin/fish');
    const c = await openSsh(s.spec);
    try {
      const signal = new AbortController().signal;
      for (const w of ['one', 'two']) expect((await c.exec(['echo', w], { signal })).stdout).toBe(`${w}\n`);
      expect(raw.every((r) => r.startsWith(PID_PRELUDE))).toBe(true);
    } finally {
      await c.close();
      await s.close();
    }
  });

  it('reports a remote death by signal', async () => {
    // A handler that dies by SIGTERM itself (a login shell in between would turn it into rc 143).
    const s = await startSshHost({ exec: () => spawn('/bin/sh', ['-c', 'kill -TERM $$']) });
    const c = await openSsh(s.spec);
    try {
      const r = await c.exec(['anything']);
      expect(r.signal).toBe('TERM');
      expect(r.rc).toBe(143);
    } finally {
      await c.close();
      await s.close();
    }
  });

  it('pads packets from the random pool while crypto.randomFillSync stays as it was', async () => {
    expect(nodeCrypto.randomFillSync).not.toBe(pooledRandomFill);
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

  it('puts files over SFTP with the mode set, atomically replacing, and gets them back', async () => {
    const dest = path.join(tmp, 'put.txt');
    await conn.put('first', dest, { mode: 0o600 });
    expect(readFileSync(dest, 'utf8')).toBe('first');
    expect(statSync(dest).mode & 0o777).toBe(0o600);
    await conn.put(Readable.from([Buffer.from('second '), Buffer.from('stream')]), dest, { mode: 0o755 });
    expect(readFileSync(dest, 'utf8')).toBe('second stream');
    expect(statSync(dest).mode & 0o777).toBe(0o755);
    expect((await conn.get(dest)).toString()).toBe('second stream');
    // Below 1 MiB the writes, mode and close are pipelined: several 16 KiB chunks, in order.
    const mid = randomBytes(200 * 1024 + 5);
    await conn.put(mid, dest, { mode: 0o640 });
    expect(readFileSync(dest).equals(mid)).toBe(true);
    expect(statSync(dest).mode & 0o777).toBe(0o640);
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    await conn.put(big, dest);
    expect((await conn.get(dest)).equals(big)).toBe(true);
    await expect(conn.get(path.join(tmp, 'nope'))).rejects.toThrow(/no such file/);
    await expect(conn.put('x', path.join(tmp, 'no/dir/x'))).rejects.toThrow(/cannot write/);
  });
});

describe('host keys', () => {
  let h: SshHost;
  beforeAll(async () => {
    h = await startSshHost();
  });
  afterAll(async () => h?.close());

  it('refuses a changed host key naming both fingerprints and the known_hosts line', async () => {
    const other = generateKey();
    const [t, b] = other.public.split(' ');
    const kh = path.join(h.dir, 'kh-changed');
    writeFileSync(kh, `# comment\n[127.0.0.1]:${h.server.port} ${t} ${b}\n`);
    const err = await openSsh({ ...h.spec, knownHostsFile: kh }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnreachableError);
    const msg = (err as Error).message;
    expect(msg).toContain(h.server.hostKeyFingerprint);
    expect(msg).toMatch(/SHA256:\S+ .*records SHA256:/);
    expect(msg).toContain(`${kh}:2`);
  });

  it('an ecdsa host verifies; a recorded key of another type is a mismatch, not a key-exchange error', async () => {
    const e = await startSshHost({ keyType: 'ecdsa' });
    try {
      const c = await openSsh(e.spec);
      await c.close();
      const kh = path.join(e.dir, 'kh-other-type');
      const [t, b] = generateKey('ed25519').public.split(' ');
      writeFileSync(kh, `[127.0.0.1]:${e.server.port} ${t} ${b}\n`);
      const err = await openSsh({ ...e.spec, knownHostsFile: kh }).catch((x: unknown) => x);
      expect((err as Error).message).toMatch(/host key mismatch/);
      expect((err as Error).message).toContain(e.server.hostKeyFingerprint);
    } finally {
      await e.close();
    }
  });

  it('refuses an unknown host in strict mode, with a hint', async () => {
    const err = await openSsh({ ...h.spec, knownHostsFile: path.join(h.dir, 'empty') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnreachableError);
    expect((err as Error).message).toMatch(/not known/);
    expect((err as UnreachableError).hint).toMatch(/accept-new/);
  });

  it('accept-new records the first-seen key (hashed), then verifies against it', async () => {
    const kh = path.join(h.dir, 'kh-new');
    const warnings: string[] = [];
    const c = await openSsh({ ...h.spec, knownHostsFile: kh, hostKeyChecking: 'accept-new' }, { onWarning: (w) => warnings.push(w) });
    await c.close();
    const text = readFileSync(kh, 'utf8');
    expect(text).toMatch(/^\|1\|\S+\|\S+ ssh-ed25519 \S+\n$/);
    expect(warnings.join()).toContain(h.server.hostKeyFingerprint);
    // Now strict mode accepts it (hashed entry matched).
    const c2 = await openSsh({ ...h.spec, knownHostsFile: kh, hostKeyChecking: 'strict' });
    await c2.close();
  });

  it('accepts a pinned fingerprint and refuses a wrong one', async () => {
    const c = await openSsh({ ...h.spec, knownHostsFile: path.join(h.dir, 'none'), hostKeyFingerprint: h.server.hostKeyFingerprint });
    await c.close();
    const wrong = 'SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    const err = await openSsh({ ...h.spec, hostKeyFingerprint: wrong }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnreachableError);
    expect((err as Error).message).toContain(wrong);
    expect((err as Error).message).toContain(h.server.hostKeyFingerprint);
  });

  it('off accepts anything but warns', async () => {
    const warnings: string[] = [];
    const c = await openSsh({ ...h.spec, knownHostsFile: path.join(h.dir, 'none'), hostKeyChecking: 'off' }, { onWarning: (w) => warnings.push(w) });
    await c.close();
    expect(warnings.join()).toMatch(/not verified/);
  });
});

describe('unreachable and auth failures', () => {
  it('a closed port is UnreachableError naming the address and port', async () => {
    const srv = net.createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const port = (srv.address() as net.AddressInfo).port;
    await new Promise<void>((r) => srv.close(() => r()));
    const h = await startSshHost();
    try {
      const err = await openSsh({ ...h.spec, port }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnreachableError);
      expect((err as Error).message).toContain(`127.0.0.1:${port}`);
      expect((err as UnreachableError).hint).toBeTruthy();
      expect((err as UnreachableError).exitCode).toBe(4);
    } finally {
      await h.close();
    }
  });

  it('a silent port times out within connectTimeoutMs', async () => {
    const srv = net.createServer(() => {}); // accepts, never speaks
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const port = (srv.address() as net.AddressInfo).port;
    const h = await startSshHost();
    try {
      const err = await openSsh({ ...h.spec, port, connectTimeoutMs: 400, hostKeyChecking: 'off' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnreachableError);
      expect((err as Error).message).toMatch(/timed out/);
    } finally {
      srv.close();
      await h.close();
    }
  });

  it('a wrong key is an authentication failure', async () => {
    const h = await startSshHost();
    try {
      const other = generateKey();
      const kf = path.join(h.dir, 'other');
      writeFileSync(kf, other.private, { mode: 0o600 });
      const err = await openSsh({ ...h.spec, privateKeyFile: kf }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnreachableError);
      expect((err as Error).message).toMatch(/authentication as .* failed/);
    } finally {
      await h.close();
    }
  });

  it('password auth works; PEM (rsa) keys and encrypted keys with a passphrase env var work', async () => {
    const h = await startSshHost({ allowPassword: { user: 'deploy', password: 'pw-123456' }, keyType: 'rsa' });
    try {
      const c = await openSsh({ ...h.spec, user: 'deploy', privateKeyFile: undefined, password: 'pw-123456' });
      expect((await c.exec(['echo', 'pw'])).stdout).toBe('pw\n');
      await c.close();
      const c2 = await openSsh(h.spec);
      await c2.close();
    } finally {
      await h.close();
    }
  });
});

describe('encrypted private key', () => {
  it('reads the passphrase from the named env var, and fails clearly without it', async () => {
    const { utils } = await import('ssh2');
    // ssh2's generator now and then emits a key its parser rejects: take one that parses.
    let kp = utils.generateKeyPairSync('ed25519', { passphrase: 'kp-pass', cipher: 'aes256-ctr', rounds: 16 });
    while (utils.parseKey(kp.private, 'kp-pass') instanceof Error) {
      kp = utils.generateKeyPairSync('ed25519', { passphrase: 'kp-pass', cipher: 'aes256-ctr', rounds: 16 });
    }
    const h = await startSshHost({ extraAuthorizedKeys: [kp.public] });
    try {
      const kf = path.join(h.dir, 'enc');
      writeFileSync(kf, kp.private, { mode: 0o600 });
      const err = await openSsh({ ...h.spec, privateKeyFile: kf }).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(/cannot use SSH private key/);
      expect((err as { hint?: string }).hint).toMatch(/ssh_private_key_passphrase_env/);
      const err2 = await openSsh({ ...h.spec, privateKeyFile: kf, privateKeyPassphraseEnv: 'TSBM_TEST_UNSET_VAR' }).catch((e: unknown) => e);
      expect((err2 as Error).message).toMatch(/TSBM_TEST_UNSET_VAR/);
      process.env.TSBM_TEST_KEY_PASS = 'kp-pass';
      const c = await openSsh({ ...h.spec, privateKeyFile: kf, privateKeyPassphraseEnv: 'TSBM_TEST_KEY_PASS' });
      expect((await c.exec(['echo', 'enc'])).stdout).toBe('enc\n');
      await c.close();
    } finally {
      delete process.env.TSBM_TEST_KEY_PASS;
      await h.close();
    }
  });
});

describe('jump host', () => {
  it('reaches a target through a jump server (forwardOut), verifying both host keys', async () => {
    const target = await startSshHost({ name: 'target' });
    const jump = await startSshHost({ name: 'jump' });
    try {
      // One known_hosts for both; the jump host accepts the same client key.
      const kh = path.join(target.dir, 'kh-both');
      writeFileSync(kh, readFileSync(target.spec.knownHostsFile!, 'utf8') + readFileSync(jump.spec.knownHostsFile!, 'utf8'));
      const jumpServer2 = await (await import('../../packages/lab/src/ssh/server.js')).startSshServer({
        hostKeys: [readFileSync(path.join(jump.dir, 'id_client'))], // any key works as a host key
        authorizedKeys: [target.clientPublicKey],
      });
      const [t, b] = jump.clientPublicKey.split(' ');
      writeFileSync(kh, readFileSync(kh, 'utf8') + `[127.0.0.1]:${jumpServer2.port} ${t} ${b}\n`);
      const c = await openSsh({ ...target.spec, knownHostsFile: kh, jump: `127.0.0.1:${jumpServer2.port}` });
      const r = await c.exec(['echo', 'via-jump']);
      expect(r.stdout).toBe('via-jump\n');
      expect(target.commands).toContain('echo via-jump');
      await c.close();
      await jumpServer2.close();
    } finally {
      await target.close();
      await jump.close();
    }
  });
});

describe('dropped connections', () => {
  it('a drop mid-command rejects (no hang) and the next use reconnects', async () => {
    const h = await startSshHost();
    const c = await openSsh(h.spec);
    try {
      const p = c.exec(['sleep', '30']);
      setTimeout(() => h.server.dropConnections(), 200);
      const err = await p.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnreachableError);
      expect((err as Error).message).toMatch(/lost/);
      const r = await c.exec(['echo', 'back']);
      expect(r.stdout).toBe('back\n');
      expect(c.handshakes).toBe(2);
      expect(h.server.connections).toBe(2);
    } finally {
      await c.close();
      await h.close();
    }
  });

  it('a drop during the handshake rejects the connect (it used to hang at some points of it)', async () => {
    const h = await startSshHost({ listen: false });
    // A front door that hands each TCP connection to the SSH server and cuts it `delay` ms later.
    let delay = 0;
    const front = net.createServer((sock) => {
      h.server.accept(sock);
      setTimeout(() => sock.destroy(), delay);
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
    const port = (front.address() as net.AddressInfo).port;
    try {
      const outcomes = new Set<string>();
      for (let round = 0; round < 2; round++) {
        for (delay = 0; delay <= 12; delay++) {
          const settled = await Promise.race([
            openSsh({ ...h.spec, port, hostKeyChecking: 'off' }).then(
              async (c) => {
                await c.close();
                return 'connected';
              },
              (e: unknown) => (e instanceof UnreachableError ? 'unreachable' : `other: ${String(e)}`),
            ),
            new Promise<string>((r) => setTimeout(() => r('hung'), 3000)),
          ]);
          outcomes.add(settled);
        }
      }
      expect([...outcomes].filter((o) => o !== 'connected' && o !== 'unreachable')).toEqual([]);
      expect(outcomes.has('unreachable')).toBe(true);
    } finally {
      front.close();
      await h.close();
    }
  }, 60_000);

  it('the dropAfter fault knob cuts the connection at the Nth exec', async () => {
    const h = await startSshHost({ dropAfter: 2 });
    const c = await openSsh(h.spec);
    try {
      expect((await c.exec(['echo', '1'])).stdout).toBe('1\n');
      await expect(c.exec(['sleep', '5'])).rejects.toBeInstanceOf(UnreachableError);
    } finally {
      await c.close();
      await h.close();
    }
  });
});

describe('become for file transfer', () => {
  it('put and get with become go through sudo over stdin/stdout, atomically, with the mode', async () => {
    // A stand-in sudo on the server's PATH: records its arguments, then runs the command.
    const bin = mkdtempSync(path.join(tmp, 'bin-'));
    const log = path.join(bin, 'sudo.log');
    writeFileSync(
      path.join(bin, 'sudo'),
      `#!/bin/sh\necho "$*" >> ${log}\nwhile [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"\n`,
      { mode: 0o755 },
    );
    const s = await startSshHost({ exec: shellExecHandler({ pathPrefix: [bin] }) });
    const c = await openSsh(s.spec);
    try {
      const dest = path.join(tmp, 'become.bin');
      const data = Buffer.from([0, 1, 2, 255, 10, 39]);
      await c.put(data, dest, { mode: 0o640, become: {} });
      expect(readFileSync(dest).equals(data)).toBe(true);
      expect(statSync(dest).mode & 0o777).toBe(0o640);
      expect((await c.get(dest, { become: { user: 'root' } })).equals(data)).toBe(true);
      const calls = readFileSync(log, 'utf8');
      expect(calls).toMatch(/^-n -- sh -c /m);
      expect(calls).toMatch(/^-n -u root -- sh -c if \[ -d "\$1" \]/m);
      expect(s.commands.join('\n')).not.toContain('\u00ff');
      await expect(c.put('x', path.join(tmp, 'no/dir/x'), { become: {} })).rejects.toThrow(/cannot write .* as root/);
    } finally {
      await c.close();
      await s.close();
    }
  });
});

describe('session limits', () => {
  it('retries refused channels when the server caps sessions per connection', async () => {
    const h = await startSshHost({ maxSessions: 3 });
    const c = await openSsh(h.spec);
    try {
      const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => c.exec(['sh', '-c', `sleep 0.05; echo ${i}`])));
      expect(rs.map((r) => r.stdout)).toEqual(Array.from({ length: 20 }, (_, i) => `${i}\n`));
      expect(c.handshakes).toBe(1);
    } finally {
      await c.close();
      await h.close();
    }
  });
});

describe('factory and pool', () => {
  it('the run pool holds each host SshConnection itself, keeps it after a drop (it redials), closes it at the end', async () => {
    const h = await startSshHost();
    const pool = new ConnectionPool(connectionFactory());
    try {
      const a = await pool.get(h.spec);
      const b = await pool.get({ ...h.spec });
      // Two layers between the executor and ssh2: the pool, then the SshConnection.
      expect(a).toBeInstanceOf(SshConnection);
      expect(b).toBe(a);
      await a.exec(['true']);
      await b.exec(['true']);
      // Unreachable: not open until used again, but the same connection (it redials itself).
      pool.drop(h.spec);
      expect(pool.isOpen(h.spec)).toBe(false);
      const c = await pool.get(h.spec);
      expect(c).toBe(a);
      expect(pool.isOpen(h.spec)).toBe(true);
      await c.exec(['true']);
      expect(h.server.connections).toBe(1);
      const l = await pool.get({ ...h.spec, connection: 'local', host: 'localhost' });
      const r = await l.exec(['sh', '-c', 'echo $0'], {});
      expect(r.stdout).toBe('sh\n');
      expect(h.commands).toEqual(['true', 'true', 'true']);
      await pool.closeAll();
      await expect(a.exec(['true'])).rejects.toThrow(/closed/);
    } finally {
      await pool.closeAll();
      await h.close();
    }
    expect(existsSync(h.dir)).toBe(false);
  });

  it('a connection that cannot redial is closed when dropped, and the next get opens another', async () => {
    const lab = fakeLab();
    const pool = new ConnectionPool(lab.factory);
    const spec = { host: 'n1', connection: 'ssh' as const, address: '127.0.0.1', port: 1, user: 'u', hostKeyChecking: 'off' as const, connectTimeoutMs: 100 };
    const first = await pool.get(spec);
    pool.drop(spec);
    await new Promise((r) => setTimeout(r, 0));
    expect(lab.opened[0]?.closed).toBe(true);
    const second = await pool.get(spec);
    expect(second).not.toBe(first);
    expect(lab.opened).toHaveLength(2);
    await pool.closeAll();
    expect(lab.opened[1]?.closed).toBe(true);
  });

});
