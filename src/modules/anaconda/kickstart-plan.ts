// One node's kickstart from its data: the install source, the pull secret (kept out of the
// kickstart: the installer fetches it once over the callback endpoint), root's keys, the config
// drive's files, the template rendered and checked. The preflight runs it with a stand-in
// callback before anything is powered; kickstart_media runs it with the node's real one.
import { type ConfigDriveDict, configDriveFiles, nodeIdentity } from '../../configdrive/content.js';
import { readIsoFiles } from '../../configdrive/iso9660-read.js';
import { resolveConfigDrive } from '../../configdrive/source.js';
import type { Vars } from '../../types.js';
import { describeDisk } from '../../module-api/disk.js';
import { type CheckResult, checkKickstart } from './kickstart-check.js';
import { authorizedKeyList, kickstartContext, renderKickstart } from './kickstart-render.js';
import { type KsSource, KsSourceError, planKickstartSource } from './kickstart-source.js';
import { parseLsblk } from '../../module-api/lsblk.js';
import { firstSet } from '../../inventory/node-data.js';
import { buildAuthFile, PullSecretError } from '../../module-api/pull-secret.js';
import { chooseRootDevice, HintError, parseHints } from '../../module-api/root-device-hints.js';

export class KickstartPlanError extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

/** The node's source and pull secret, before anything is published. */
export interface SourcePlan {
  source: KsSource;
  /** The auth file JSON the installer fetches once (oci:// with a pull secret). */
  authJson?: string;
  /** The raw pull secret as the node gave it (checked never to appear in the kickstart). */
  rawSecret?: string;
  insecureRegistry?: string;
}

export function planSource(vars: Vars, a: { image?: unknown; pullSecret?: unknown; tlsVerify: boolean }, secret: (v: string) => void): SourcePlan {
  let source: KsSource;
  try {
    source = planKickstartSource({
      source: firstSet(a.image, vars, 'instance_info.image_source'),
      hashAlgo: firstSet(undefined, vars, 'instance_info.image_os_hash_algo'),
      hashValue: firstSet(undefined, vars, 'instance_info.image_os_hash_value'),
    });
  } catch (e) {
    if (e instanceof KsSourceError) throw new KickstartPlanError(e.message, e.hint);
    throw e;
  }
  const plan: SourcePlan = { source };
  if (source.image) {
    const ps = firstSet(a.pullSecret, vars, 'instance_info.image_pull_secret');
    if (ps !== undefined) {
      const raw = typeof ps === 'string' ? ps : JSON.stringify(ps);
      secret(raw);
      try {
        plan.authJson = buildAuthFile(raw, source.image.registry).json;
        secret(plan.authJson);
      } catch (e) {
        if (e instanceof PullSecretError) throw new KickstartPlanError(e.message, 'fix instance_info.image_pull_secret');
        throw e;
      }
      plan.rawSecret = raw;
    }
    if (!a.tlsVerify) plan.insecureRegistry = source.image.registry;
  }
  return plan;
}

/** Config drive files a file name in a kickstart line can carry safely. */
const SAFE_PATH = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

async function configDrive(vars: Vars, signal?: AbortSignal): Promise<{ path: string; data: Buffer }[]> {
  const value = firstSet(undefined, vars, 'instance_info.configdrive');
  if (value === undefined) return [];
  const node = nodeIdentity(vars);
  // Validated (and an ISO string or URL decoded) as configdrive_write does.
  const resolved = await resolveConfigDrive(value, node, signal ? { signal } : {});
  const files = resolved.source === 'dict' ? configDriveFiles(value as ConfigDriveDict, node) : readIsoFiles(resolved.iso);
  for (const f of files) {
    if (!SAFE_PATH.test(f.path) || f.path.split('/').includes('..')) {
      throw new KickstartPlanError(`config drive file ${JSON.stringify(f.path)} cannot be written by a kickstart`, 'use plain file names (letters, digits, . _ -) in the config drive');
    }
  }
  return files;
}

export interface KickstartInput {
  vars: Vars;
  host: string;
  task: string;
  template: string;
  templateFile: string;
  plan: SourcePlan;
  callback: { url: string; token: string };
  signal?: AbortSignal;
  secret(v: string): void;
}

export interface BuiltKickstart extends CheckResult {
  text: string;
}

/** Renders and checks; template errors (undefined variables, syntax) throw TsbmError('template'). */
export async function buildKickstart(i: KickstartInput): Promise<BuiltKickstart> {
  const keys = (() => {
    try {
      return authorizedKeyList(firstSet(undefined, i.vars, 'instance_info.bootc_authorized_keys', 'instance_info.authorized_keys'));
    } catch (e) {
      if (e instanceof KsSourceError) throw new KickstartPlanError(e.message, e.hint);
      throw e;
    }
  })();
  const context = kickstartContext({
    node: nodeIdentity(i.vars),
    source: i.plan.source,
    callback: i.callback,
    pullSecret: i.plan.authJson !== undefined,
    ...(i.plan.insecureRegistry ? { insecureRegistry: i.plan.insecureRegistry } : {}),
    authorizedKeys: keys,
    configDrive: await configDrive(i.vars, i.signal),
  });
  const text = renderKickstart({
    template: i.template,
    templateFile: i.templateFile,
    vars: i.vars,
    context,
    host: i.host,
    task: i.task,
    onSecret: (v) => i.secret(v),
  });
  const checked = checkKickstart(text, { callbackUrl: i.callback.url, token: i.callback.token, ...(i.plan.rawSecret ? { pullSecret: i.plan.rawSecret } : {}) });
  if (i.plan.authJson && text.includes(i.plan.authJson)) checked.problems.push('the kickstart carries the pull secret in clear; fetch it in %pre from {{ ks.callback.url }}/pull-secret, as the default template does');
  return { ...checked, text };
}

/** Root device hints the installer's disk question can be answered with (by_path needs links lsblk lacks). */
export function anacondaHints(vars: Vars): ReturnType<typeof parseHints> {
  const raw = firstSet(undefined, vars, 'instance_info.root_device', 'properties.root_device');
  let hints: ReturnType<typeof parseHints>;
  try {
    hints = parseHints(raw);
  } catch (e) {
    throw new KickstartPlanError((e as Error).message, 'fix root_device hints (instance_info.root_device / properties.root_device)');
  }
  if (hints.some((h) => h.name === 'by_path')) {
    throw new KickstartPlanError('the by_path root device hint is not available to anaconda deploys (the installer reports disks with lsblk)', 'use name, serial, wwn, size, model, vendor, hctl, rotational or tran');
  }
  return hints;
}

/** Answers the installer's `lsblk -J -b -O` with the kickstart lines that confine it to one disk. */
export function chooseInstallDisk(lsblkJson: string, hints: ReturnType<typeof parseHints>): { ok: true; lines: string; device: string; reason: string } | { ok: false; message: string } {
  let disks: ReturnType<typeof parseLsblk>;
  try {
    disks = parseLsblk(lsblkJson);
  } catch (e) {
    return { ok: false, message: `the installer's lsblk output does not parse: ${(e as Error).message}` };
  }
  try {
    const c = chooseRootDevice(disks, hints);
    const k = c.disk.kname;
    if (!/^[A-Za-z0-9._:-]+$/.test(k)) return { ok: false, message: `disk name ${JSON.stringify(k)} cannot go into a kickstart line` };
    return {
      ok: true,
      device: c.disk.name,
      reason: `${describeDisk(c.disk)}: ${c.reason}`,
      // Only this disk is seen, and only this disk is cleared.
      lines: `ignoredisk --only-use=${k}\nclearpart --all --initlabel --drives=${k}\n`,
    };
  } catch (e) {
    if (e instanceof HintError) return { ok: false, message: e.message };
    throw e;
  }
}
