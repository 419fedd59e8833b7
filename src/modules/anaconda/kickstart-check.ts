// Checks a rendered kickstart before any node is powered: it parses; every command is one
// Anaconda knows; it names exactly one install source; it powers the node off when done (a
// reboot could boot the installer again while its media are still in); its %pre, %post and
// %onerror call back with this node's URL and token (else tsbm could never tell how the install
// went); and it does not carry the pull secret in clear. Problems come back as sentences.
import { didYouMean } from '../../schema/did-you-mean.js';
import { type Kickstart, KickstartSyntaxError, parseKickstart } from './kickstart-parse.js';

/** Anaconda's kickstart commands (pykickstart, current Fedora and RHEL). */
export const KICKSTART_COMMANDS: ReadonlySet<string> = new Set([
  'authselect', 'autopart', 'autostep', 'bootc', 'bootloader', 'btrfs', 'cdrom', 'clearpart', 'cmdline', 'device',
  'driverdisk', 'eula', 'fcoe', 'firewall', 'firstboot', 'graphical', 'group', 'halt', 'harddrive', 'hmc',
  'ignoredisk', 'iscsi', 'iscsiname', 'keyboard', 'lang', 'liveimg', 'logging', 'logvol', 'mediacheck', 'module',
  'mount', 'network', 'nfs', 'nvdimm', 'ostreecontainer', 'ostreesetup', 'part', 'partition', 'poweroff', 'raid',
  'realm', 'reboot', 'repo', 'reqpart', 'rescue', 'rhsm', 'rootpw', 'selinux', 'services', 'shutdown', 'skipx',
  'snapshot', 'sshkey', 'sshpw', 'syspurpose', 'text', 'timesource', 'timezone', 'updates', 'url', 'user', 'vnc',
  'volgroup', 'xconfig', 'zerombr', 'zfcp', 'zipl',
]);

const INSTALL_SOURCES = ['ostreecontainer', 'liveimg', 'url', 'ostreesetup', 'bootc', 'cdrom', 'harddrive', 'nfs', 'hmc'];

export interface CheckExpect {
  callbackUrl: string;
  token: string;
  /** Must not appear in the text (the installer fetches it once instead). */
  pullSecret?: string;
}

export interface CheckResult {
  problems: string[];
  kickstart?: Kickstart;
}

const CALLBACKS: [string, string, string][] = [
  ['pre', 'start', '%pre'],
  ['post', 'end', '%post'],
  ['onerror', 'error', '%onerror'],
];

export function checkKickstart(text: string, expect: CheckExpect): CheckResult {
  let ks: Kickstart;
  try {
    ks = parseKickstart(text);
  } catch (e) {
    if (e instanceof KickstartSyntaxError) return { problems: [e.message] };
    throw e;
  }
  const problems: string[] = [];
  for (const c of ks.commands) {
    if (!KICKSTART_COMMANDS.has(c.name)) {
      const near = didYouMean(c.name, [...KICKSTART_COMMANDS]);
      problems.push(`line ${c.line}: "${c.name}" is not a kickstart command${near ? ` (did you mean ${near}?)` : ''}`);
    }
  }
  const sources = ks.commands.filter((c) => INSTALL_SOURCES.includes(c.name));
  if (sources.length === 0) problems.push(`no install source: the kickstart needs one of ${INSTALL_SOURCES.slice(0, 3).join(', ')} (ks.source.line gives the one image_source asks for)`);
  if (sources.length > 1) problems.push(`${sources.length} install sources (${sources.map((s) => `${s.name} line ${s.line}`).join(', ')}): give exactly one`);
  const reboot = ks.commands.find((c) => c.name === 'reboot');
  if (reboot) problems.push(`line ${reboot.line}: reboot would boot the installer again while its media are inserted; use poweroff (tsbm ejects the media and boots the disk after the install)`);
  if (!reboot && !ks.commands.some((c) => ['poweroff', 'halt', 'shutdown'].includes(c.name))) problems.push('no poweroff: the kickstart must power the node off when done (tsbm then ejects the media and boots the disk)');
  for (const [kind, status, label] of CALLBACKS) {
    const calls = ks.sections.some(
      (s) => s.kind === kind && s.body.includes(expect.token) && s.body.includes(expect.callbackUrl) && new RegExp(`\\b${status}\\b`).test(s.body),
    );
    if (!calls) problems.push(`${label} does not call back "${status}" with this node's URL and token ({{ ks.callback.url }}/${status}, header ${'{{ ks.callback.header }}'}: {{ ks.callback.token }}); without it tsbm cannot tell how the install went`);
  }
  if (expect.pullSecret && expect.pullSecret.length >= 4 && text.includes(expect.pullSecret)) {
    problems.push('the kickstart carries the pull secret in clear (it would sit on the OEMDRV volume); fetch it in %pre from {{ ks.callback.url }}/pull-secret, as the default template does');
  }
  return { problems, kickstart: ks };
}
