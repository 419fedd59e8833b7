// A real etcd (Debian's etcd-server) for one test file: 127.0.0.1 on free ports, a temporary
// data directory, stopped (and its directory removed) when the file ends. Tests skip with a
// visible reason when the binary is missing (.ci/setup.sh installs it).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ETCD = ['/usr/bin/etcd', '/usr/local/bin/etcd'].find((p) => existsSync(p));

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', () => ok()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}

export interface EtcdServer {
  /** `127.0.0.1:PORT`, as a store setting takes it. */
  hostPort: string;
  proc: ChildProcess;
  /** Stops etcd (SIGTERM, then SIGKILL); its data stays until `remove`. */
  stop(): Promise<void>;
  /** Starts it again on the same ports and data. */
  restart(): Promise<void>;
  /** Stops it and removes its data directory. */
  remove(): Promise<void>;
}

export interface EtcdTls {
  cert: string;
  key: string;
  /** With it, clients must present a certificate this CA signed. */
  clientCa?: string;
}

/** Starts etcd and waits until it answers (bounded). */
export async function startEtcd(opts: { tls?: EtcdTls } = {}): Promise<EtcdServer> {
  if (!ETCD) throw new Error('etcd is not installed (apt-get install etcd-server)');
  const dir = mkdtempSync(join(tmpdir(), 'tsbm-etcd-'));
  const [client, peer] = [await freePort(), await freePort()];
  const scheme = opts.tls ? 'https' : 'http';
  const clientUrl = `${scheme}://127.0.0.1:${client}`;
  const peerUrl = `http://127.0.0.1:${peer}`;
  const args = [
    '--name', 'default', '--data-dir', join(dir, 'data'),
    '--listen-client-urls', clientUrl, '--advertise-client-urls', clientUrl,
    '--listen-peer-urls', peerUrl, '--initial-advertise-peer-urls', peerUrl,
    '--initial-cluster', `default=${peerUrl}`,
    ...(opts.tls ? ['--cert-file', opts.tls.cert, '--key-file', opts.tls.key] : []),
    ...(opts.tls?.clientCa ? ['--client-cert-auth', '--trusted-ca-file', opts.tls.clientCa] : []),
  ];
  const server: EtcdServer = {
    hostPort: `127.0.0.1:${client}`,
    proc: undefined as unknown as ChildProcess,
    stop: async () => {
      const p = server.proc;
      if (p.exitCode !== null || p.signalCode !== null) return;
      const gone = new Promise<void>((ok) => p.once('exit', () => ok()));
      p.kill('SIGTERM');
      const t = setTimeout(() => p.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(t);
    },
    restart: async () => {
      await server.stop();
      await launch();
    },
    remove: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const launch = async () => {
    server.proc = spawn(ETCD!, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    server.proc.stderr!.on('data', (d: Buffer) => {
      log = (log + d.toString()).slice(-4000);
    });
    for (let i = 0; i < 100; i++) {
      if (server.proc.exitCode !== null) break;
      if (log.includes('ready to serve client requests')) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    await server.remove();
    throw new Error(`etcd did not start:\n${log}`);
  };
  await launch();
  return server;
}

/** PEM files for a CA, a server certificate for 127.0.0.1 and a client certificate, made by openssl. */
export function makeTlsFiles(dir: string): { ca: string; serverCert: string; serverKey: string; clientCert: string; clientKey: string } {
  const f = (n: string) => join(dir, n);
  const ossl = (...a: string[]) => execFileSync('openssl', a, { stdio: 'pipe' });
  ossl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=tsbm test CA', '-keyout', f('ca.key'), '-out', f('ca.pem'));
  for (const [name, cn, ext] of [
    ['server', '127.0.0.1', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth'],
    ['client', 'tsbm', 'extendedKeyUsage=clientAuth'],
  ] as const) {
    ossl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${cn}`, '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`));
    writeFileSync(f(`${name}.ext`), `${ext}\n`);
    ossl('x509', '-req', '-in', f(`${name}.csr`), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', f(`${name}.ext`), '-out', f(`${name}.pem`));
  }
  return { ca: f('ca.pem'), serverCert: f('server.pem'), serverKey: f('server.key'), clientCert: f('client.pem'), clientKey: f('client.key') };
}
