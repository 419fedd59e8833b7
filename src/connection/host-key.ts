// Host key policy for one SSH hop: pinned fingerprint, known_hosts (strict / accept-new) or
// off. Produces ssh2's hostVerifier plus the detailed error to throw when it says no.
import os from 'node:os';
import path from 'node:path';
import { TsbmError } from '../errors.js';
import { sameFingerprint, sha256Fingerprint } from './fingerprint.js';
import { appendKnownHost, type KnownHostEntry, keyTypeOf, knownHostsName, lookupKnownHosts } from './known-hosts.js';

export interface HostKeyPolicy {
  host: string; // inventory name, for messages
  address: string;
  port: number;
  mode: 'strict' | 'accept-new' | 'off';
  knownHostsFile?: string;
  pinnedFingerprint?: string;
  onWarning?: (message: string) => void;
}

export interface HostKeyCheck {
  /** Host key algorithms in preference order (recorded types first), so a multi-key server offers a known one. */
  serverHostKey?: string[];
  hostVerifier: (key: Buffer, verify: (ok: boolean) => void) => void;
  /** Set when the verifier refused the key: the error to report instead of ssh2's generic one. */
  failure(): TsbmError | undefined;
  /**
   * True once the key matched a pinned fingerprint or a recorded known_hosts key; false for
   * `off` and for a key accept-new has just recorded (nothing vouched for it).
   */
  verified(): boolean;
}

function defaultKnownHostsFile(): string {
  return path.join(os.homedir(), '.ssh', 'known_hosts');
}

const DEFAULT_HOST_KEY_ALGOS = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'rsa-sha2-512',
  'rsa-sha2-256',
  'ssh-rsa',
];

// Key types as recorded in known_hosts -> algorithms a server may negotiate for them.
function algorithmsFor(keyType: string): string[] {
  return keyType === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'] : [keyType];
}

export async function prepareHostKeyCheck(p: HostKeyPolicy): Promise<HostKeyCheck> {
  let failure: TsbmError | undefined;
  let verified = false;
  const isVerified = () => verified;
  const where = `${p.host} (${p.address}:${p.port})`;
  const fail = (message: string, hint: string) => {
    failure = new TsbmError('unreachable', message, { host: p.host, hint });
  };

  if (p.pinnedFingerprint) {
    const pinned = p.pinnedFingerprint;
    return {
      hostVerifier: (key, verify) => {
        const got = sha256Fingerprint(key);
        if (sameFingerprint(got, pinned)) {
          verified = true;
          return verify(true);
        }
        fail(
          `host key mismatch for ${where}: the server presented ${got}, but ssh_host_key_fingerprint pins ${pinned}`,
          'if the host was reinstalled, update ssh_host_key_fingerprint; otherwise treat this as a possible man-in-the-middle',
        );
        verify(false);
      },
      failure: () => failure,
      verified: isVerified,
    };
  }

  if (p.mode === 'off') {
    return {
      hostVerifier: (_key, verify) => {
        p.onWarning?.(`host key checking is off for ${where}: the server's identity is not verified`);
        verify(true);
      },
      failure: () => failure,
      verified: isVerified,
    };
  }

  const file = p.knownHostsFile ?? defaultKnownHostsFile();
  const name = knownHostsName(p.address, p.port);
  let entries: KnownHostEntry[] = await lookupKnownHosts(file, name);
  if (!p.knownHostsFile) entries = entries.concat(await lookupKnownHosts('/etc/ssh/ssh_known_hosts', name));
  const live = entries.filter((e) => !e.revoked);
  // Recorded key types first (like OpenSSH), the rest after: a server that only has a key of
  // another type still completes the key exchange, and the verifier reports the mismatch.
  const known = live.flatMap((e) => algorithmsFor(e.keyType));
  const serverHostKey = known.length ? [...new Set([...known, ...DEFAULT_HOST_KEY_ALGOS])] : [];

  return {
    ...(serverHostKey.length ? { serverHostKey } : {}),
    hostVerifier: (key, verify) => {
      const got = sha256Fingerprint(key);
      const revoked = entries.find((e) => e.revoked && e.key.equals(key));
      if (revoked) {
        fail(`host key ${got} of ${where} is marked @revoked in ${revoked.file}:${revoked.line}`, 'do not connect to this host until its key is replaced');
        return verify(false);
      }
      if (live.some((e) => e.key.equals(key))) {
        verified = true;
        return verify(true);
      }
      const other = live[0];
      if (other) {
        fail(
          `host key mismatch for ${where}: the server presented ${got}, but ${other.file}:${other.line} records ${sha256Fingerprint(other.key)}`,
          `if the host was reinstalled, remove line ${other.line} of ${other.file} (ssh-keygen -R '${name}' -f ${other.file}); otherwise treat this as a possible man-in-the-middle`,
        );
        return verify(false);
      }
      if (p.mode === 'accept-new') {
        appendKnownHost(file, name, keyTypeOf(key), key).then(
          (line) => {
            p.onWarning?.(`recorded new host key ${got} for ${where} in ${file}:${line}`);
            verify(true);
          },
          (e: Error) => {
            fail(`cannot record the host key of ${where} in ${file}: ${e.message}`, 'check that the known_hosts file is writable');
            verify(false);
          },
        );
        return;
      }
      fail(
        `host key of ${where} is not known: ${got} is not in ${file}`,
        `verify the fingerprint, then add it (ssh-keyscan -p ${p.port} ${p.address} >> ${file}), pin it with ssh_host_key_fingerprint, or set ssh_host_key_checking: accept-new`,
      );
      verify(false);
    },
    failure: () => failure,
    verified: isVerified,
  };
}
