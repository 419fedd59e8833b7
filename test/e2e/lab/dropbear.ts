// Dropbear (Debian's dropbear-bin) in a namespace, standing in for a minimal ramdisk that is
// not OpenSSH. Same handle as sshd.ts, so a BMC node or a test can use either.
// Dropbear reads authorized keys only from ~/.ssh/authorized_keys: it runs in a private mount
// namespace where /root is a directory of the test's (as on a ramdisk, nothing of the machine's
// /root shows). `unshare --mount` keeps every other mount, so podman still sees the cgroup mounts.
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Netns } from './netns.js';
import { sh } from './run.js';
import { type Sshd, daemonByPidFile, trackServer, writeCommandWrapper } from './sshd.js';

export type DropbearKeyType = 'ed25519' | 'ecdsa' | 'rsa';

export interface DropbearOptions {
  port?: number;
  /** Host key type (default ed25519). */
  keyType?: DropbearKeyType;
  /** Log every command line to `${dir}/commands.log` (dropbear's -c forced command). */
  logCommands?: boolean;
  /** See SshdOptions.productUuid (needs logCommands). */
  productUuid?: string;
  /**
   * Whether an SFTP request reaches an sftp-server (default false: dropbear then runs a path
   * that is not there, as on a ramdisk without one; needs logCommands).
   */
  sftp?: boolean;
}

/** The OpenSSH form (`type base64`) of a dropbear host key's public half. */
function dropbearPublicKey(keyFile: string): string {
  const out = sh(['dropbearkey', '-y', '-f', keyFile]).stdout;
  const line = out.split('\n').find((l) => /^(ssh-|ecdsa-)/.test(l));
  if (!line) throw new Error(`lab: no public key in dropbearkey -y output: ${out}`);
  const [type, key] = line.trim().split(/\s+/);
  return `${type} ${key}`;
}

export function prepareDropbear(
  ns: Netns,
  dir: string,
  authorizedKeys: string[],
  opts: DropbearOptions = {},
): Sshd {
  const port = opts.port ?? 22;
  mkdirSync(dir, { recursive: true });
  const commandsLog = join(dir, 'commands.log');
  const wrapper = opts.logCommands
    ? writeCommandWrapper(dir, {
        commandsLog,
        sftp: opts.sftp === true,
        ...(opts.productUuid ? { productUuid: opts.productUuid } : {}),
      })
    : undefined;
  const keyType = opts.keyType ?? 'ed25519';
  const hostKey = join(dir, `dropbear_${keyType}_host_key`);
  if (!existsSync(hostKey)) {
    sh(['dropbearkey', '-t', keyType, ...(keyType === 'rsa' ? ['-s', '3072'] : []), '-f', hostKey]);
  }
  // The home dropbear finds for root: private to the user, as dropbear insists.
  const home = join(dir, 'root-home');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  chmodSync(home, 0o700);
  chmodSync(join(home, '.ssh'), 0o700);
  writeFileSync(join(home, '.ssh', 'authorized_keys'), `${authorizedKeys.join('\n')}\n`, { mode: 0o600 });
  const pidFile = join(dir, 'dropbear.pid');
  const daemon = daemonByPidFile(pidFile);
  const hostKeyPub = dropbearPublicKey(hostKey);
  const [type, key] = hostKeyPub.split(/\s+/);
  const hostPattern = port === 22 ? ns.nsIp : `[${ns.nsIp}]:${port}`;
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
      // -s: no passwords; -P: pid file; it forks into the background once listening.
      const dropbear = [
        'dropbear',
        '-s',
        '-m',
        '-P',
        pidFile,
        '-p',
        `${ns.nsIp}:${port}`,
        '-r',
        hostKey,
        ...(wrapper ? ['-c', wrapper] : []),
      ];
      sh([
        'unshare',
        '--mount',
        '--propagation',
        'private',
        'sh',
        '-c',
        'mount --bind "$1" /root && shift && exec "$@"',
        'sh',
        home,
        'nsenter',
        `--net=/run/netns/${ns.name}`,
        ...dropbear,
      ]);
      for (let i = 0; i < 50 && !daemon.running(); i++) sh(['sleep', '0.1']);
      if (!daemon.running()) throw new Error(`lab: dropbear did not start on ${ns.nsIp}:${port}`);
    },
    stop: daemon.stop,
    running: daemon.running,
  };
  return trackServer(handle);
}
