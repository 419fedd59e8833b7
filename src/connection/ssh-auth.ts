// Credentials for one SSH login: key file (OpenSSH or PEM; passphrase from a named env var),
// ssh-agent, password. Parsed up front so a bad key is an operator error, not a hang.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AuthenticationType, ConnectConfig } from 'ssh2';
import { utils } from './ssh2-lib.js';
import { UnreachableError } from '../errors.js';
import type { ConnectionSpec } from './types.js';

/**
 * No usable credentials: the host cannot be logged in to, so it is unreachable (exit 4,
 * `ignore_unreachable` applies), as ansible-playbook finds it; no retry fixes it.
 */
const credentials = (host: string, message: string, hint: string): UnreachableError =>
  new UnreachableError(host, message, undefined, hint, { setting: true });

export type AuthConfig = Pick<ConnectConfig, 'privateKey' | 'passphrase' | 'agent' | 'password' | 'authHandler'>;

export function authConfig(spec: ConnectionSpec): AuthConfig {
  const out: AuthConfig = {};
  const methods: AuthenticationType[] = [];
  if (spec.privateKeyFile) {
    let key: Buffer;
    try {
      key = readFileSync(spec.privateKeyFile);
    } catch (e) {
      throw credentials(spec.host, `cannot read SSH private key ${spec.privateKeyFile}: ${(e as Error).message}`, 'check ssh_private_key_file');
    }
    const envName = spec.privateKeyPassphraseEnv;
    const passphrase = envName ? process.env[envName] : undefined;
    if (envName && passphrase === undefined) {
      throw credentials(spec.host, `environment variable ${envName} (ssh_private_key_passphrase_env) is not set`, `export ${envName} with the passphrase of ${spec.privateKeyFile}`);
    }
    const parsed = utils.parseKey(key, passphrase);
    if (parsed instanceof Error) {
      const encrypted = /encrypted|passphrase/i.test(parsed.message);
      throw credentials(
        spec.host,
        `cannot use SSH private key ${spec.privateKeyFile}: ${parsed.message}`,
        encrypted
          ? 'the key is encrypted: set ssh_private_key_passphrase_env to the name of an environment variable holding its passphrase'
          : 'the file must be an OpenSSH or PEM private key',
      );
    }
    out.privateKey = key;
    if (passphrase !== undefined) out.passphrase = passphrase;
    methods.push('publickey');
  }
  if (!spec.privateKeyFile) {
    const key = defaultIdentity();
    if (key) {
      out.privateKey = key;
      methods.push('publickey');
    }
  }
  const agent = spec.agent === undefined ? process.env.SSH_AUTH_SOCK : spec.agent;
  if (agent) {
    out.agent = agent;
    methods.push('agent');
  }
  if (spec.password !== undefined) {
    out.password = spec.password;
    methods.push('password');
  }
  if (methods.length === 0) {
    throw credentials(spec.host, `no SSH credentials for ${spec.host}`, 'set ssh_private_key_file, run an ssh-agent (SSH_AUTH_SOCK), create ~/.ssh/id_ed25519, or set ssh_password');
  }
  out.authHandler = methods;
  return out;
}

// Like OpenSSH without -i: the user's usual identity files, the first one usable without a
// passphrase. (Encrypted ones need ssh_private_key_file + ssh_private_key_passphrase_env.)
const DEFAULT_IDENTITIES = ['id_ed25519', 'id_ecdsa', 'id_rsa'];

function defaultIdentity(): Buffer | undefined {
  for (const name of DEFAULT_IDENTITIES) {
    let key: Buffer;
    try {
      key = readFileSync(path.join(os.homedir(), '.ssh', name));
    } catch {
      continue;
    }
    if (!(utils.parseKey(key) instanceof Error)) return key;
  }
  return undefined;
}

/**
 * The auth methods to try, in order, leaving the password out while the host's key is not
 * verified (checking off, or a key accept-new has just recorded): a password given to an
 * impostor is a password lost. Keys and the agent prove possession without giving anything away.
 */
export function passwordOnlyIfVerified(
  auth: AuthConfig,
  verified: () => boolean,
  onSkip: () => void,
): AuthConfig['authHandler'] {
  const methods = Array.isArray(auth.authHandler) ? [...(auth.authHandler as AuthenticationType[])] : [];
  return (() => {
    for (;;) {
      const next = methods.shift();
      if (next === undefined) return false;
      if (next !== 'password' || verified()) return next;
      onSkip();
    }
  }) as unknown as AuthConfig['authHandler'];
}
