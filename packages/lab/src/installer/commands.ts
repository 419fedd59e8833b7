// The kickstart commands the simulated installer honours, with the options each takes, and
// what they add up to: the disk to use and clear, the layout, the install source, root's keys,
// what to do at the end. A command Anaconda knows but the simulation does not (raid, part, ...)
// or an option it does not know is an installation error, reported as Anaconda reports one
// (log lines, then %onerror), never silently ignored.
import { commandOptions, type KsCommand } from 'tsbm/lib/modules/anaconda/kickstart-parse.js';

interface Spec {
  /** Options taking a value (`--x=v` or `--x v`). */
  values?: string[];
  /** Options that are flags. */
  flags?: string[];
  /** How many positional arguments it takes at most. */
  positional?: number;
}

const HONOURED: Record<string, Spec> = {
  text: {},
  cmdline: {},
  graphical: {},
  skipx: {},
  lang: { values: ['addsupport'], positional: 1 },
  keyboard: { values: ['vckeymap', 'xlayouts', 'switch'], positional: 1 },
  timezone: { values: ['ntpservers'], flags: ['utc', 'isUtc', 'nontp'], positional: 1 },
  timesource: { values: ['ntp-server', 'ntp-pool'], flags: ['ntp-disable', 'nts'] },
  network: {
    values: ['bootproto', 'device', 'hostname', 'ip', 'netmask', 'gateway', 'nameserver', 'mtu', 'ipv6'],
    flags: ['activate', 'onboot', 'noipv6', 'nodefroute', 'nodns'],
  },
  rootpw: { flags: ['lock', 'iscrypted', 'plaintext', 'allow-ssh'], positional: 1 },
  sshkey: { values: ['username'], positional: 1 },
  user: { values: ['name', 'groups', 'password', 'homedir', 'shell', 'uid', 'gid'], flags: ['iscrypted', 'plaintext', 'lock'] },
  selinux: { flags: ['enforcing', 'permissive', 'disabled'] },
  firewall: { values: ['service', 'port', 'trust'], flags: ['enabled', 'disabled', 'enable', 'disable', 'use-system-defaults'] },
  firstboot: { flags: ['disabled', 'disable', 'enable', 'enabled', 'reconfig'] },
  services: { values: ['enabled', 'disabled'] },
  zerombr: {},
  ignoredisk: { values: ['only-use', 'drives'] },
  clearpart: { values: ['drives', 'list', 'disklabel'], flags: ['all', 'initlabel', 'none', 'linux'] },
  autopart: { values: ['type', 'fstype'], flags: ['noswap', 'nohome', 'noboot', 'nolvm', 'encrypted'] },
  reqpart: { flags: ['add-boot'] },
  bootloader: { values: ['location', 'append', 'timeout', 'boot-drive', 'driveorder'], flags: ['leavebootorder'] },
  poweroff: {},
  halt: {},
  shutdown: {},
  reboot: { flags: ['eject', 'kexec'] },
  ostreecontainer: { values: ['url', 'transport', 'stateroot', 'remote'], flags: ['no-signature-verification'] },
  liveimg: { values: ['url', 'checksum', 'proxy'], flags: ['noverifyssl'] },
  url: { values: ['url', 'mirrorlist', 'metalink', 'proxy'], flags: ['noverifyssl'] },
};

export class InstallError extends Error {}

export type SimSource =
  | { kind: 'ostreecontainer'; url: string; transport: string; verify: boolean }
  | { kind: 'liveimg'; url: string; checksum?: string }
  | { kind: 'url'; url: string };

export interface SimPlan {
  onlyUse: string[] | undefined;
  clear: { all: boolean; drives: string[] | undefined; initlabel: boolean } | undefined;
  zerombr: boolean;
  layout: { type: string; swap: boolean; home: boolean } | undefined;
  source: SimSource | undefined;
  keys: { user: string; key: string }[];
  rootLocked: boolean;
  end: 'poweroff' | 'reboot' | 'none';
}

const list = (v: string | true | undefined): string[] | undefined => (typeof v === 'string' ? v.split(',').map((s) => s.trim().replace(/^\/dev\//, '')).filter(Boolean) : undefined);

export function interpret(commands: KsCommand[]): SimPlan {
  const plan: SimPlan = { onlyUse: undefined, clear: undefined, zerombr: false, layout: undefined, source: undefined, keys: [], rootLocked: false, end: 'none' };
  for (const c of commands) {
    const spec = HONOURED[c.name];
    if (!spec) throw new InstallError(`kickstart line ${c.line}: the simulated installer cannot honour "${c.name}"`);
    const { options, positional } = commandOptions(c.args, new Set(spec.values ?? []));
    for (const [k, v] of options) {
      const isValue = spec.values?.includes(k);
      const isFlag = spec.flags?.includes(k);
      if (!isValue && !isFlag) throw new InstallError(`kickstart line ${c.line}: ${c.name} has no option --${k}`);
      if (isValue && v === true) throw new InstallError(`kickstart line ${c.line}: ${c.name} --${k} needs a value`);
    }
    if (positional.length > (spec.positional ?? 0)) throw new InstallError(`kickstart line ${c.line}: ${c.name} takes ${spec.positional ?? 'no'} argument(s), got "${positional.join(' ')}"`);
    const opt = (k: string) => options.get(k);
    switch (c.name) {
      case 'ignoredisk':
        plan.onlyUse = list(opt('only-use'));
        break;
      case 'clearpart':
        plan.clear = { all: opt('all') === true, drives: list(opt('drives')), initlabel: opt('initlabel') === true };
        break;
      case 'zerombr':
        plan.zerombr = true;
        break;
      case 'autopart': {
        const type = typeof opt('type') === 'string' ? String(opt('type')) : 'lvm';
        if (!['plain', 'lvm', 'btrfs', 'thinp'].includes(type)) throw new InstallError(`kickstart line ${c.line}: autopart --type=${type} is not plain, lvm, btrfs or thinp`);
        plan.layout = { type, swap: opt('noswap') !== true, home: opt('nohome') !== true };
        break;
      }
      case 'rootpw':
        plan.rootLocked = opt('lock') === true;
        break;
      case 'sshkey': {
        const user = opt('username');
        if (typeof user !== 'string' || positional.length !== 1) throw new InstallError(`kickstart line ${c.line}: sshkey needs --username and one key`);
        plan.keys.push({ user, key: positional[0]! });
        break;
      }
      case 'ostreecontainer':
      case 'liveimg':
      case 'url': {
        if (plan.source) throw new InstallError(`kickstart line ${c.line}: a second install source (${c.name}); the first was ${plan.source.kind}`);
        const url = opt('url');
        if (typeof url !== 'string') throw new InstallError(`kickstart line ${c.line}: ${c.name} needs --url`);
        if (c.name === 'ostreecontainer') {
          const transport = typeof opt('transport') === 'string' ? String(opt('transport')) : 'registry';
          plan.source = { kind: 'ostreecontainer', url, transport, verify: opt('no-signature-verification') !== true };
        } else if (c.name === 'liveimg') {
          const sum = opt('checksum');
          plan.source = { kind: 'liveimg', url, ...(typeof sum === 'string' ? { checksum: sum.toLowerCase() } : {}) };
        } else plan.source = { kind: 'url', url };
        break;
      }
      case 'poweroff':
      case 'halt':
      case 'shutdown':
        plan.end = 'poweroff';
        break;
      case 'reboot':
        plan.end = 'reboot';
        break;
      default:
        break; // honoured: recorded by its presence, nothing for the simulation to do
    }
  }
  return plan;
}
