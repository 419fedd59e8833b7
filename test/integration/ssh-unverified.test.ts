// A host whose key was not verified gets nothing it could abuse: no password (a key or the agent
// proves possession without handing anything over), and an instance wait's unverified
// connection (ssh_host_key_checking: off) is not kept for the tasks after it.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuthContext } from 'ssh2';
import { openSsh } from '../../src/connection/ssh.js';
import { Server } from '../../src/connection/ssh2-lib.js';
import { type SshHost, generateKey, startSshHost } from '../helpers/ssh-host.js';
import { runYaml, sshVars } from '../helpers/run-yaml.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** An SSH server that records every authentication attempt (method and password) and accepts passwords. */
async function recordingServer(): Promise<{ port: number; attempts: { method: string; password?: string }[]; hostKey: string }> {
  const hostKey = generateKey();
  const attempts: { method: string; password?: string }[] = [];
  const server = new Server({ hostKeys: [hostKey.private] }, (client) => {
    client.on('authentication', (ctx: AuthContext) => {
      attempts.push({ method: ctx.method, ...(ctx.method === 'password' ? { password: ctx.password } : {}) });
      if (ctx.method === 'password') return ctx.accept();
      ctx.reject(['password', 'publickey']);
    });
    client.on('ready', () => client.on('session', (accept) => accept().on('exec', (acc) => {
      const ch = acc();
      ch.exit(0);
      ch.end();
    })));
    client.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  open.push({ close: () => new Promise<void>((r) => server.close(() => r())) });
  return { port: (server.address() as { port: number }).port, attempts, hostKey: hostKey.public };
}

describe('no password for a host that was not verified', () => {
  const base = { host: 'node1', connection: 'ssh' as const, address: '127.0.0.1', user: 'root', agent: false as const, connectTimeoutMs: 5000 };

  it('with ssh_host_key_checking off the password is not offered, and the error says why', async () => {
    const srv = await recordingServer();
    const err = (await openSsh({ ...base, port: srv.port, password: 'fleet-password', hostKeyChecking: 'off' }).then(
      (c) => void open.push(c),
      (e: unknown) => e,
    )) as Error & { hint?: string };
    expect(err).toBeInstanceOf(Error);
    expect(err.hint).toMatch(/ssh_password is offered only to a host whose key is verified/);
    expect(srv.attempts.some((a) => a.method === 'password')).toBe(false);
    expect(JSON.stringify(srv.attempts)).not.toContain('fleet-password');
  });

  it('nor to a first-seen key that accept-new just recorded', async () => {
    const srv = await recordingServer();
    const dir = scratch('tsbm-kh-');
    const knownHostsFile = path.join(dir, 'kh-empty');
    writeFileSync(knownHostsFile, '');
    const c = await openSsh({ ...base, port: srv.port, password: 'fleet-password', hostKeyChecking: 'accept-new', knownHostsFile }).catch(() => undefined);
    if (c) open.push(c);
    expect(c).toBeUndefined();
    expect(srv.attempts.some((a) => a.method === 'password')).toBe(false);
  });

  it('a verified host (known_hosts) does get the password', async () => {
    const srv = await recordingServer();
    const dir = scratch('tsbm-kh-');
    const knownHostsFile = path.join(dir, 'kh');
    writeFileSync(knownHostsFile, `[127.0.0.1]:${srv.port} ${srv.hostKey}\n`);
    const c = await openSsh({ ...base, port: srv.port, password: 'fleet-password', hostKeyChecking: 'strict', knownHostsFile });
    open.push(c);
    expect(srv.attempts).toContainEqual({ method: 'password', password: 'fleet-password' });
  });
});

describe('an unverified instance wait is not reused', () => {
  it('the task after wait_agent with ssh_host_key_checking off connects afresh, with its own checking', async () => {
    const h: SshHost = await startSshHost({ name: 'node1' });
    open.push(h);
    // Nothing recorded for this host: only checking off can reach it.
    writeFileSync(h.spec.knownHostsFile as string, '');
    const r = await runYaml(
      `all:
  hosts:
    node1:
${sshVars(h)}`,
      `- hosts: node1
  tasks:
    - name: Wait for the installed system
      wait_agent:
        timeout: 10
        identity: "off"
      vars:
        ssh_host_key_checking: "off"
    - name: later task
      command: "true"
`,
    );
    expect(r.result('node1', 'Wait for the installed system')?.status).toBe('ok');
    const later = r.result('node1', 'later task');
    expect(later?.status).toBe('unreachable');
    expect(later?.msg).toMatch(/host key of node1 .* is not known/);
  }, 30_000);
});
