// How to reach a host, from its variables: tsbm's names first, Ansible's aliases accepted.
import { userInfo } from 'node:os';
import { TsbmError } from '../errors.js';
import type { ConnectionSpec } from '../connection/types.js';
import { TRANSFER_METHODS, type TransferMethod } from '../connection/transfer-choice.js';
import type { Vars } from '../types.js';

/** [tsbm name, ...Ansible aliases]; the first one set wins. */
const NAMES = {
  address: ['ssh_host', 'ansible_host', 'ansible_ssh_host'],
  port: ['ssh_port', 'ansible_port', 'ansible_ssh_port'],
  user: ['ssh_user', 'ansible_user', 'ansible_ssh_user'],
  key: ['ssh_private_key_file', 'ansible_ssh_private_key_file', 'ansible_private_key_file'],
  keyPassphraseEnv: ['ssh_private_key_passphrase_env'],
  password: ['ssh_password', 'ansible_password', 'ansible_ssh_pass', 'ansible_ssh_password'],
  connection: ['connection', 'ansible_connection'],
  knownHosts: ['ssh_known_hosts_file'],
  fingerprint: ['ssh_host_key_fingerprint'],
  checking: ['ssh_host_key_checking'],
  jump: ['ssh_jump'],
  timeout: ['ssh_connect_timeout', 'ansible_ssh_timeout', 'ansible_timeout'],
  transfer: ['ssh_transfer_method', 'ansible_ssh_transfer_method'],
} as const;

const LOCAL_NAMES = new Set(['localhost', '127.0.0.1', '::1']);

function pick(vars: Vars, names: readonly string[]): { name: string; value: unknown } | undefined {
  for (const name of names) {
    const value = vars[name];
    if (value !== undefined && value !== null && value !== '') return { name, value };
  }
  return undefined;
}

function currentUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? process.env.LOGNAME ?? 'root';
  }
}

function bad(host: string, name: string, want: string, got: unknown): TsbmError {
  const shown = /pass/i.test(name) ? typeof got : JSON.stringify(got);
  return new TsbmError('parse', `host ${host}: ${name} must be ${want}, got ${shown}`, {
    host,
    hint: `fix ${name} in the inventory or host_vars`,
  });
}

function str(host: string, p: { name: string; value: unknown } | undefined): string | undefined {
  if (!p) return undefined;
  if (typeof p.value === 'string') return p.value;
  if (typeof p.value === 'number') return String(p.value);
  throw bad(host, p.name, 'a string', p.value);
}

function num(
  host: string,
  p: { name: string; value: unknown } | undefined,
  min: number,
  max: number,
): number | undefined {
  if (!p) return undefined;
  const n = typeof p.value === 'string' && p.value.trim() !== '' ? Number(p.value) : p.value;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < min || n > max)
    throw bad(host, p.name, `a number from ${min} to ${max}`, p.value);
  return n;
}

export function connectionSpecFor(host: string, vars: Vars): ConnectionSpec {
  const address = str(host, pick(vars, NAMES.address)) ?? host;
  const connPick = pick(vars, NAMES.connection);
  let connection: ConnectionSpec['connection'];
  if (connPick) {
    const c = str(host, connPick);
    // Ansible's `paramiko`/`smart` mean SSH too.
    if (c === 'ssh' || c === 'paramiko' || c === 'smart') connection = 'ssh';
    else if (c === 'local') connection = 'local';
    else throw bad(host, connPick.name, '"ssh" or "local"', c);
  } else connection = LOCAL_NAMES.has(host) && LOCAL_NAMES.has(address) ? 'local' : 'ssh';

  const checkPick = pick(vars, NAMES.checking);
  let hostKeyChecking: ConnectionSpec['hostKeyChecking'] = 'strict';
  if (checkPick) {
    const v = checkPick.value;
    if (v === 'strict' || v === 'accept-new' || v === 'off') hostKeyChecking = v;
    else if (v === true) hostKeyChecking = 'strict';
    else if (v === false) hostKeyChecking = 'off';
    else throw bad(host, checkPick.name, 'strict, accept-new or off', v);
  }

  const spec: ConnectionSpec = {
    host,
    connection,
    address,
    port: num(host, pick(vars, NAMES.port), 1, 65535) ?? 22,
    user: str(host, pick(vars, NAMES.user)) ?? currentUser(),
    hostKeyChecking,
    connectTimeoutMs: (num(host, pick(vars, NAMES.timeout), 0.001, 3600) ?? 10) * 1000,
  };
  const key = str(host, pick(vars, NAMES.key));
  if (key) spec.privateKeyFile = key;
  const keyPassphraseEnv = str(host, pick(vars, NAMES.keyPassphraseEnv));
  if (keyPassphraseEnv) spec.privateKeyPassphraseEnv = keyPassphraseEnv;
  const password = str(host, pick(vars, NAMES.password));
  if (password) spec.password = password;
  const kh = str(host, pick(vars, NAMES.knownHosts));
  if (kh) spec.knownHostsFile = kh;
  const fp = str(host, pick(vars, NAMES.fingerprint));
  if (fp) spec.hostKeyFingerprint = fp;
  const jump = str(host, pick(vars, NAMES.jump));
  if (jump) spec.jump = jump;
  const transfer = transferMethod(host, pick(vars, NAMES.transfer));
  if (transfer) spec.transferMethod = transfer;
  return spec;
}

// Ansible's values; its `scp` means "not SFTP", which tsbm's piped transfer does over exec.
function transferMethod(host: string, p: { name: string; value: unknown } | undefined): TransferMethod | undefined {
  if (!p) return undefined;
  const v = p.value === 'scp' ? 'piped' : p.value;
  if ((TRANSFER_METHODS as readonly unknown[]).includes(v)) return v as TransferMethod;
  throw bad(host, p.name, 'smart, sftp or piped', p.value);
}
