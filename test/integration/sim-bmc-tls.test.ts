// The fake BMC's certificates are issued in-process (packages/lab/src/bmc/x509.ts), with no openssl
// program: a CA and a server certificate it signs. They must satisfy Node's TLS client and, where
// installed, strict independent verifiers (openssl verify -x509_strict, Python's
// VERIFY_X509_STRICT, which refuses a leaf without an authority key identifier).
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCert, type SelfSignedCert } from '../../packages/lab/src/bmc/tls.js';
import { findProgram } from '../../src/util/find-program.js';

const OPENSSL = findProgram('openssl');
const PYTHON = findProgram('python3');

describe('fake BMC certificates without openssl', () => {
  let c: SelfSignedCert;
  let dir: string;
  let server: Server;
  let port: number;
  beforeAll(async () => {
    c = await selfSignedCert('127.0.0.1');
    dir = mkdtempSync(join(tmpdir(), 'tsbm-bmc-cert-'));
    writeFileSync(join(dir, 'ca.pem'), c.caPem);
    writeFileSync(join(dir, 'cert.pem'), c.certPem);
    server = createServer({ cert: c.certPem, key: c.keyPem }, (s) => s.end('hello\n'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => server?.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('is a CA-signed server certificate for 127.0.0.1 and localhost', () => {
    const ca = new X509Certificate(c.caPem);
    const leaf = new X509Certificate(c.certPem);
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(ca.verify(ca.publicKey)).toBe(true);
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(leaf.checkHost('localhost')).toBe('localhost');
    expect(leaf.checkHost('example.com')).toBeUndefined();
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']); // extended key usage: serverAuth
    expect(Date.parse(leaf.validTo) - Date.now()).toBeGreaterThan(6 * 86400_000);
    expect(Date.parse(leaf.validFrom)).toBeLessThan(Date.now());
  });

  it('needs no program: issued with an empty PATH', async () => {
    const saved = process.env.PATH;
    process.env.PATH = '';
    try {
      // A host not asked for before: generated now, not taken from the cache.
      const other = await selfSignedCert('127.0.0.2');
      expect(new X509Certificate(other.certPem).checkIP('127.0.0.2')).toBe('127.0.0.2');
    } finally {
      process.env.PATH = saved;
    }
  });

  it('a TLS client trusting only the CA connects by IP and by name', async () => {
    for (const servername of [undefined, 'localhost']) {
      const line = await new Promise<string>((resolve, reject) => {
        const s = connect({ host: '127.0.0.1', port, ca: c.caPem, ...(servername ? { servername } : {}) }, () => {
          s.once('data', (d) => resolve(d.toString()));
        });
        s.once('error', reject);
      });
      expect(line).toBe('hello\n');
    }
  });

  it.skipIf(!OPENSSL)('openssl verify -x509_strict -purpose sslserver accepts it (openssl installed)', () => {
    const out = execFileSync(OPENSSL!, ['verify', '-x509_strict', '-purpose', 'sslserver', '-CAfile', join(dir, 'ca.pem'), join(dir, 'cert.pem')], { encoding: 'utf8' });
    expect(out.trim()).toBe(`${join(dir, 'cert.pem')}: OK`);
  });

  it.skipIf(!PYTHON)('Python ssl with VERIFY_X509_STRICT completes a handshake (python3 installed)', async () => {
    const script = [
      'import socket, ssl, sys',
      'ctx = ssl.create_default_context(cafile=sys.argv[1])',
      'ctx.verify_flags |= ssl.VERIFY_X509_STRICT',
      'for name in ("127.0.0.1", "localhost"):',
      '    with socket.create_connection(("127.0.0.1", int(sys.argv[2]))) as s:',
      '        with ctx.wrap_socket(s, server_hostname=name) as t:',
      '            print(name, t.recv(16).decode().strip())',
    ].join('\n');
    // Not execFileSync: the server answering it runs on this event loop.
    const { stdout } = await promisify(execFile)(PYTHON!, ['-c', script, join(dir, 'ca.pem'), String(port)], { encoding: 'utf8', timeout: 30_000 });
    expect(stdout).toBe('127.0.0.1 hello\nlocalhost hello\n');
  });
});
