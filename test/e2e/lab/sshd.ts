// Real OpenSSH in a namespace, standing in for a ramdisk (or any test host). Started with
// `nsenter --net` so podman over SSH still sees the machine's cgroup mounts (TESTLAB.md).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Netns, inNetns } from './netns.js';
import { sh } from './run.js';

export interface ClientKey {
  privateKeyFile: string;
  publicKey: string;
}

/** An ed25519 key pair for the controller side. */
export function makeClientKey(dir: string, name = 'id_ed25519'): ClientKey {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  if (!existsSync(file)) sh(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'tsbm-test', '-f', file]);
  return { privateKeyFile: file, publicKey: readFileSync(`${file}.pub`, 'utf8').trim() };
}

export interface Sshd {
  ns: Netns;
  address: string;
  port: number;
  dir: string;
  hostKeyPub: string;
  /** Where remote command lines are logged with `logCommands`. */
  commandsLog: string;
  /** A known_hosts line for this host (for strict host key checking). */
  knownHostsLine: string;
  start(): void;
  stop(): void;
  running(): boolean;
}

const all: Sshd[] = [];

export interface SshdOptions {
  port?: number;
  /** Log every remote command line to `${dir}/commands.log` (a ForceCommand wrapper), so tests can check argv. */
  logCommands?: boolean;
  /**
   * These machines have no /sys/class/dmi/id/product_uuid; with logCommands, commands that
   * read it get a file holding this value instead, as a real ramdisk would show its own.
   */
  productUuid?: string;
  /** false: no `Subsystem sftp` line, as in many minimal ramdisks (default true). */
  sftp?: boolean;
  /** More environment for every session (sshd's SetEnv), e.g. a container storage of its own. */
  env?: Record<string, string>;
}

/**
 * The test-only forced command (OpenSSH's ForceCommand, dropbear's -c): records the command
 * line the client sent, points product_uuid reads at `productUuid`'s file, then runs it as the
 * server would have. A request for an SFTP server runs it when `sftp`, else fails as a shell
 * does when the binary is missing (exit 127: dropbear without an sftp-server).
 */
export function writeCommandWrapper(
  dir: string,
  opts: { commandsLog: string; productUuid?: string; sftp: boolean },
): string {
  const wrapper = join(dir, 'log-command.sh');
  const uuidFile = join(dir, 'product_uuid');
  if (opts.productUuid) writeFileSync(uuidFile, `${opts.productUuid.toLowerCase()}\n`);
  const uuidRewrite = opts.productUuid
    ? [
        `SSH_ORIGINAL_COMMAND=$(printf '%s' "$SSH_ORIGINAL_COMMAND" | sed 's#/sys/class/dmi/id/product_uuid#${uuidFile}#g')`,
      ]
    : [];
  writeFileSync(
    wrapper,
    [
      '#!/bin/sh',
      '# Test-only: records the command line the client sent, then runs it as the server would.',
      `printf '%s\\n' "$SSH_ORIGINAL_COMMAND" >> ${opts.commandsLog}`,
      ...uuidRewrite,
      'case "$SSH_ORIGINAL_COMMAND" in',
      opts.sftp
        ? '  */sftp-server) exec "$SSH_ORIGINAL_COMMAND" ;;'
        : '  */sftp-server) echo "sh: 1: $SSH_ORIGINAL_COMMAND: not found" >&2; exit 127 ;;',
      '  "") exec /bin/sh -l ;;',
      '  *) exec /bin/sh -c "$SSH_ORIGINAL_COMMAND" ;;',
      'esac',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return wrapper;
}

/** running() and stop() for a daemon that writes its PID to `pidFile`. */
export function daemonByPidFile(pidFile: string): { running(): boolean; stop(): void } {
  // A daemon deletes its pid file as it exits: the file may go between any check and the read.
  const pidOf = () => {
    try {
      return Number(readFileSync(pidFile, 'utf8').trim()) || 0;
    } catch {
      return 0;
    }
  };
  const running = () => {
    const pid = pidOf();
    if (!pid) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  return {
    running,
    stop() {
      const pid = pidOf();
      if (pid && running()) {
        process.kill(pid, 'SIGTERM');
        for (let i = 0; i < 50 && running(); i++) sh(['sleep', '0.1']);
      }
      rmSync(pidFile, { force: true });
    },
  };
}

/** Lab SSH servers of any kind, so stopAllSshd() stops them all. */
export function trackServer(s: Sshd): Sshd {
  all.push(s);
  return s;
}

export function prepareSshd(
  ns: Netns,
  dir: string,
  authorizedKeys: string[],
  portOrOpts: number | SshdOptions = {},
): Sshd {
  const opts: SshdOptions = typeof portOrOpts === 'number' ? { port: portOrOpts } : portOrOpts;
  const port = opts.port ?? 22;
  mkdirSync(dir, { recursive: true });
  const commandsLog = join(dir, 'commands.log');
  const sftp = opts.sftp !== false;
  const wrapper = opts.logCommands
    ? writeCommandWrapper(dir, { commandsLog, sftp, ...(opts.productUuid ? { productUuid: opts.productUuid } : {}) })
    : undefined;
  const hostKey = join(dir, 'ssh_host_ed25519_key');
  if (!existsSync(hostKey)) sh(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
  const auth = join(dir, 'authorized_keys');
  writeFileSync(auth, `${authorizedKeys.join('\n')}\n`, { mode: 0o600 });
  const pidFile = join(dir, 'sshd.pid');
  const config = join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `ListenAddress ${ns.nsIp}`,
      `Port ${port}`,
      `HostKey ${hostKey}`,
      `AuthorizedKeysFile ${auth}`,
      `PidFile ${pidFile}`,
      'UsePAM no',
      'StrictModes no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      'MaxSessions 50',
      'MaxStartups 100',
      ...(sftp ? [wrapper ? 'Subsystem sftp /usr/lib/openssh/sftp-server' : 'Subsystem sftp internal-sftp'] : []),
      ...(wrapper ? [`ForceCommand ${wrapper}`] : []),
      `SetEnv TSBM_TEST_HOST=${ns.name}${Object.entries(opts.env ?? {}).map(([k, v]) => ` ${k}=${v}`).join('')}`,
      '',
    ].join('\n'),
  );
  const hostKeyPub = readFileSync(`${hostKey}.pub`, 'utf8').trim();
  const [type, key] = hostKeyPub.split(/\s+/);
  const hostPattern = port === 22 ? ns.nsIp : `[${ns.nsIp}]:${port}`;
  const daemon = daemonByPidFile(pidFile);
  const handle: Sshd = {
    ns,
    address: ns.nsIp,
    port,
    dir,
    hostKeyPub,
    commandsLog,
    knownHostsLine: `${hostPattern} ${type} ${key}`,
    start() {
      if (daemon.running()) return;
      mkdirSync('/run/sshd', { recursive: true });
      sh(inNetns(ns, ['/usr/sbin/sshd', '-f', config]));
    },
    stop: daemon.stop,
    running: daemon.running,
  };
  return trackServer(handle);
}

export function stopAllSshd(): void {
  for (const s of all.splice(0)) s.stop();
}

/** Runs a command on the host with the system ssh client (for lab self-tests). */
export function sshRun(s: Sshd, key: ClientKey, command: string, allowFail = false) {
  const kh = join(s.dir, 'client_known_hosts');
  writeFileSync(kh, `${s.knownHostsLine}\n`);
  return sh(
    [
      'ssh',
      '-i',
      key.privateKeyFile,
      '-p',
      String(s.port),
      '-o',
      `UserKnownHostsFile=${kh}`,
      '-o',
      'StrictHostKeyChecking=yes',
      '-o',
      'BatchMode=yes',
      '-o',
      'ConnectTimeout=5',
      `root@${s.address}`,
      command,
    ],
    { allowFail },
  );
}
