// An in-process SSH host for integration tests: fresh host and client keys, a known_hosts file
// holding the host key, and a ConnectionSpec that reaches it with strict host key checking.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ConnectionSpec } from '../../src/connection/types.js';
import { generateSshKeyPair, type SshKeyType } from '../../packages/lab/src/ssh/keys.js';
import { type SshServerHandle, type SshServerOptions, startSshServer } from '../../packages/lab/src/ssh/server.js';

export interface SshHost {
  spec: ConnectionSpec;
  /** Every remote command line received, in order. */
  commands: string[];
  server: SshServerHandle;
  /** Scratch directory (keys, known_hosts); removed on close. */
  dir: string;
  hostPublicKey: string;
  clientPublicKey: string;
  close(): Promise<void>;
}

export type SshHostOptions = Partial<Omit<SshServerOptions, 'hostKeys' | 'authorizedKeys'>> & {
  /** Inventory name (default "node1"). */
  name?: string;
  /** Key type for both keys (default ed25519). */
  keyType?: 'ed25519' | 'ecdsa' | 'rsa';
  spec?: Partial<ConnectionSpec>;
  /** More public keys allowed to log in (OpenSSH format). */
  extraAuthorizedKeys?: string[];
};

/** A fresh key pair that ssh2 can parse (see packages/lab/src/ssh/keys.ts). */
export function generateKey(type: SshKeyType = 'ed25519'): { private: string; public: string } {
  return generateSshKeyPair(type);
}

export async function startSshHost(opts: SshHostOptions = {}): Promise<SshHost> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tsbm-ssh-'));
  const hostKey = generateKey(opts.keyType);
  const clientKey = generateKey(opts.keyType);
  const keyFile = path.join(dir, 'id_client');
  writeFileSync(keyFile, clientKey.private, { mode: 0o600 });
  const commands: string[] = [];
  const { name, keyType: _k, spec: specOverrides, onCommand, extraAuthorizedKeys, ...serverOpts } = opts;
  const server = await startSshServer({
    ...serverOpts,
    hostKeys: [hostKey.private],
    authorizedKeys: [clientKey.public, ...(extraAuthorizedKeys ?? [])],
    onCommand: (c) => {
      commands.push(c);
      onCommand?.(c);
    },
  });
  const knownHostsFile = path.join(dir, 'known_hosts');
  const [type, b64] = hostKey.public.split(' ');
  writeFileSync(knownHostsFile, `[127.0.0.1]:${server.port} ${type} ${b64}\n`);
  const spec: ConnectionSpec = {
    host: name ?? 'node1',
    connection: 'ssh',
    address: '127.0.0.1',
    port: server.port,
    user: os.userInfo().username,
    privateKeyFile: keyFile,
    knownHostsFile,
    hostKeyChecking: 'strict',
    connectTimeoutMs: 5000,
    agent: false,
    ...specOverrides,
  };
  return {
    spec,
    commands,
    server,
    dir,
    hostPublicKey: hostKey.public,
    clientPublicKey: clientKey.public,
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
