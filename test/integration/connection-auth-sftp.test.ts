import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, type SFTPWrapper, utils } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSsh } from '../../src/connection/ssh.js';
import { startSshServer } from '../../packages/lab/src/ssh/server.js';
import { generateKey, startSshHost } from '../helpers/ssh-host.js';

const haveAgent = spawnSync('sh', ['-c', 'command -v ssh-agent && command -v ssh-add']).status === 0;

describe.skipIf(!haveAgent)('ssh-agent auth (needs ssh-agent, ssh-add)', () => {
  let agent: ChildProcess;
  let dir: string;
  let sock: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tsbm-agent-'));
    sock = path.join(dir, 'agent.sock');
    agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
    for (let i = 0; i < 50 && !existsSync(sock); i++) await new Promise((r) => setTimeout(r, 50));
  });
  afterAll(() => {
    agent?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('logs in with a key held only by the agent', async () => {
    const k = generateKey();
    const kf = path.join(dir, 'agent_key');
    writeFileSync(kf, k.private, { mode: 0o600 });
    const add = spawnSync('ssh-add', [kf], { env: { ...process.env, SSH_AUTH_SOCK: sock }, encoding: 'utf8' });
    expect(add.status, add.stderr).toBe(0);
    const h = await startSshHost({ extraAuthorizedKeys: [k.public] });
    try {
      const c = await openSsh({ ...h.spec, privateKeyFile: undefined, agent: sock });
      expect((await c.exec(['echo', 'agent'])).stdout).toBe('agent\n');
      await c.close();
    } finally {
      await h.close();
    }
  });
});

describe('default identity', () => {
  it('without ssh_private_key_file, uses ~/.ssh/id_ed25519 like OpenSSH', async () => {
    const h = await startSshHost();
    const home = mkdtempSync(path.join(os.tmpdir(), 'tsbm-home-'));
    const oldHome = process.env.HOME;
    try {
      mkdirSync(path.join(home, '.ssh'), { mode: 0o700 });
      writeFileSync(path.join(home, '.ssh', 'id_ed25519'), readFileSync(h.spec.privateKeyFile!), { mode: 0o600 });
      process.env.HOME = home;
      const c = await openSsh({ ...h.spec, privateKeyFile: undefined });
      expect((await c.exec(['echo', 'default-key'])).stdout).toBe('default-key\n');
      await c.close();
      process.env.HOME = path.join(home, 'empty');
      const err = await openSsh({ ...h.spec, privateKeyFile: undefined }).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(/no SSH credentials/);
    } finally {
      process.env.HOME = oldHome;
      rmSync(home, { recursive: true, force: true });
      await h.close();
    }
  });
});

describe('PEM keys', () => {
  it('accepts a PKCS#1 PEM RSA private key', async () => {
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    const parsed = utils.parseKey(privateKey);
    if (parsed instanceof Error || Array.isArray(parsed)) throw new Error('cannot parse generated PEM');
    const pub = `ssh-rsa ${parsed.getPublicSSH().toString('base64')}`;
    const h = await startSshHost({ extraAuthorizedKeys: [pub] });
    try {
      const kf = path.join(h.dir, 'pem_key');
      writeFileSync(kf, privateKey, { mode: 0o600 });
      expect(readFileSync(kf, 'utf8')).toMatch(/BEGIN RSA PRIVATE KEY/);
      const c = await openSsh({ ...h.spec, privateKeyFile: kf });
      expect((await c.exec(['echo', 'pem'])).stdout).toBe('pem\n');
      await c.close();
    } finally {
      await h.close();
    }
  });
});

describe('in-process server SFTP subsystem', () => {
  let root: string;
  let server: Awaited<ReturnType<typeof startSshServer>>;
  let client: Client;
  let sftp: SFTPWrapper;
  const call = <T>(fn: (cb: (err: Error | null | undefined, v?: T) => void) => void) =>
    new Promise<T>((res, rej) => fn((e, v) => (e ? rej(e) : res(v as T))));

  beforeAll(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'tsbm-sftproot-'));
    const hk = generateKey();
    const ck = generateKey();
    server = await startSshServer({ hostKeys: [hk.private], authorizedKeys: [ck.public], sftpRoot: root, sftpHome: '/home' });
    mkdirSync(path.join(root, 'home'));
    client = new Client();
    await new Promise<void>((res, rej) => {
      client.once('ready', () => res());
      client.once('error', rej);
      client.connect({ host: '127.0.0.1', port: server.port, username: 'u', privateKey: ck.private });
    });
    sftp = await call<SFTPWrapper>((cb) => client.sftp(cb));
  });
  afterAll(async () => {
    client?.end();
    await server?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('serves mkdir/readdir/stat/lstat/rename/remove/rmdir/realpath under sftpRoot', async () => {
    await call<void>((cb) => sftp.mkdir('/data', { mode: 0o750 }, cb));
    await call<void>((cb) => sftp.writeFile('/data/a.txt', 'hello', cb));
    expect(readFileSync(path.join(root, 'data/a.txt'), 'utf8')).toBe('hello');
    const names = (await call<{ filename: string }[]>((cb) => sftp.readdir('/data', cb))).map((e) => e.filename);
    expect(names).toEqual(['a.txt']);
    expect((await call<{ size: number }>((cb) => sftp.stat('/data/a.txt', cb))).size).toBe(5);
    expect((await call<{ isDirectory(): boolean }>((cb) => sftp.lstat('/data', cb))).isDirectory()).toBe(true);
    await call<void>((cb) => sftp.writeFile('/data/b.txt', 'other', cb));
    await call<void>((cb) => sftp.rename('/data/a.txt', '/data/b.txt', cb)); // replaces, like posix-rename
    expect(readFileSync(path.join(root, 'data/b.txt'), 'utf8')).toBe('hello');
    await call<void>((cb) => sftp.chmod('/data/b.txt', 0o600, cb));
    expect((await call<{ mode: number }>((cb) => sftp.stat('/data/b.txt', cb))).mode & 0o777).toBe(0o600);
    expect(await call<string>((cb) => sftp.realpath('x/../y', cb))).toBe('/home/y');
    await call<void>((cb) => sftp.writeFile('rel.txt', 'r', cb));
    expect(readFileSync(path.join(root, 'home/rel.txt'), 'utf8')).toBe('r');
    await call<void>((cb) => sftp.unlink('/data/b.txt', cb));
    await call<void>((cb) => sftp.rmdir('/data', cb));
    expect(existsSync(path.join(root, 'data'))).toBe(false);
    const err = await call<unknown>((cb) => sftp.stat('/nope', cb)).catch((e: { code?: number }) => e);
    expect((err as { code?: number }).code).toBe(2);
  });

  it('cannot escape sftpRoot with ..', async () => {
    await call<void>((cb) => sftp.writeFile('/../../escape.txt', 'x', cb));
    expect(existsSync(path.join(root, 'escape.txt'))).toBe(true);
  });
});
