// A real docker-registry with Bearer-token auth, as quay.io, ghcr.io, Harbor or GitLab serve
// it: the registry answers 401 with a token realm; a small token server here checks Basic
// credentials and signs a JWT (RS256, its certificate in the registry's rootcertbundle) for the
// scope asked. Its access log counts every request, so a test can count blob transfers. Stopped
// by the test.
import { type ChildProcess, spawn } from 'node:child_process';
import { createSign, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { sh } from './run.js';

export interface TokenRegistry {
  /** host:port, as image references name it. */
  address: string;
  user: string;
  password: string;
  /** A podman auth file with the right credentials. */
  authFile: string;
  /** Successful blob downloads so far, by digest (the registry's own access log). */
  blobGets(): Map<string, number>;
  /** The access log so far (combined format, one request a line). */
  accessLog(): string;
  stop(): Promise<void>;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

async function waitHttp(url: string, proc: ChildProcess, log: () => string): Promise<void> {
  const start = Date.now();
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`lab: docker-registry exited (${proc.exitCode}): ${log()}`);
    try {
      const r = await fetch(url);
      if (r.status === 401 || r.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() - start > 20_000) throw new Error(`lab: registry at ${url} did not answer: ${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startTokenRegistry(dir: string, host: string, port: number, user = 'tester', password = 'tok3n-pull-pw'): Promise<TokenRegistry> {
  mkdirSync(join(dir, 'storage'), { recursive: true });
  const key = join(dir, 'token.key');
  const cert = join(dir, 'token.crt');
  sh(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=tsbm-test-token-issuer']);
  const certDer = Buffer.from(readFileSync(cert, 'utf8').replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const service = 'tsbm-test-registry';
  const issuer = 'tsbm-test-issuer';

  const tokens: Server = createServer((req, res) => {
    const auth = req.headers.authorization ?? '';
    const [u, ...rest] = Buffer.from(auth.replace(/^Basic /, ''), 'base64').toString('utf8').split(':');
    if (!auth.startsWith('Basic ') || u !== user || rest.join(':') !== password) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="tokens"' }).end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://x');
    const access = url.searchParams.getAll('scope').flatMap((s) => {
      const [type, name, actions] = s.split(':');
      return type && name && actions ? [{ type, name, actions: actions.split(',') }] : [];
    });
    const now = Math.floor(Date.now() / 1000);
    const head = b64url(JSON.stringify({ typ: 'JWT', alg: 'RS256', x5c: [certDer.toString('base64')] }));
    const claims = b64url(JSON.stringify({ iss: issuer, sub: user, aud: service, exp: now + 600, nbf: now - 10, iat: now, jti: randomUUID(), access }));
    const signature = createSign('RSA-SHA256').update(`${head}.${claims}`).sign(readFileSync(key)).toString('base64url');
    const token = `${head}.${claims}.${signature}`;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ token, access_token: token, expires_in: 600 }));
  });
  await new Promise<void>((ok) => tokens.listen(0, host, () => ok()));
  const tokenPort = (tokens.address() as AddressInfo).port;

  const config = join(dir, 'config.yml');
  writeFileSync(
    config,
    [
      'version: 0.1',
      'log:',
      '  level: warn',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${join(dir, 'storage')}`,
      'http:',
      `  addr: ${host}:${port}`,
      'auth:',
      '  token:',
      `    realm: http://${host}:${tokenPort}/token`,
      `    service: ${service}`,
      `    issuer: ${issuer}`,
      `    rootcertbundle: ${cert}`,
      '',
    ].join('\n'),
  );
  // No registries.conf.d drop-in marking it insecure (push with --tls-verify=false): a drop-in
  // naming this registry would replace the table tsbm writes for it, mirror included.
  const address = `${host}:${port}`;
  const authFile = join(dir, 'auth.json');
  writeFileSync(authFile, JSON.stringify({ auths: { [address]: { auth: Buffer.from(`${user}:${password}`).toString('base64') } } }), { mode: 0o600 });
  let output = '';
  let access = '';
  const proc = spawn('docker-registry', ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  // The access log (combined format) goes to stdout.
  proc.stdout?.on('data', (d: Buffer) => {
    access += d.toString();
  });
  proc.stderr?.on('data', (d: Buffer) => {
    output = (output + d.toString()).slice(-4000);
  });
  const stop = async () => {
    tokens.close();
    if (proc.exitCode === null) {
      const done = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await Promise.race([done, new Promise((r) => setTimeout(r, 5000))]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
  };
  try {
    await waitHttp(`http://${address}/v2/`, proc, () => output);
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    address,
    user,
    password,
    authFile,
    accessLog: () => access,
    blobGets: () => {
      const out = new Map<string, number>();
      for (const m of access.matchAll(/"GET \/v2\/[^ ]+\/blobs\/(sha256:[0-9a-f]{64}) HTTP\/[\d.]+" 200 /g)) out.set(m[1]!, (out.get(m[1]!) ?? 0) + 1);
      return out;
    },
    stop,
  };
}
