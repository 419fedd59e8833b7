// The kickstart of one node: the `ks` values a template sees (install source line, callback URL
// and token, authorized keys, config drive files), rendered through tsbm's template engine
// (strict: an undefined variable is an error naming the template), then checked before any
// node is powered (kickstart-check.ts).
import { renderText } from '../../template/render.js';
import type { Vars } from '../../types.js';
import { type KsSource, KsSourceError, sourceLine } from './kickstart-source.js';

/** Where cloud-init's ConfigDrive datasource looks for a seeded config drive. */
const SEED_DIR = '/var/lib/cloud/seed/config_drive';
const TOKEN_HEADER_NAME = 'X-Tsbm-Token';

export interface KsContextInput {
  node: { name: string; uuid: string };
  /** With `location` set (a file:// source once published). */
  source: KsSource;
  callback: { url: string; token: string };
  /** The installer fetches the pull secret once from the callback endpoint (oci:// with a secret). */
  pullSecret: boolean;
  /** A registry to mark insecure in the installer (image_tls_verify: false). */
  insecureRegistry?: string;
  authorizedKeys: string[];
  /** Config drive files (openstack/latest/meta_data.json, ...), written to SEED_DIR in %post. */
  configDrive?: { path: string; data: Buffer }[];
}

/** Keys as `sshkey` lines carry them: one key per line, no double quotes or backslashes. */
export function authorizedKeyList(value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  const raw = Array.isArray(value) ? value.map(String) : String(value).split('\n');
  const keys = raw.map((k) => k.trim()).filter((k) => k !== '' && !k.startsWith('#'));
  for (const k of keys) {
    if (/["\\\r\n`$]/.test(k) || !/^\S+ \S+/.test(k)) {
      throw new KsSourceError(`authorized key ${JSON.stringify(k.slice(0, 40))}… is not one OpenSSH public key line`, 'give instance_info.bootc_authorized_keys as OpenSSH public key lines');
    }
  }
  return keys;
}

/** The `ks` object templates read. */
export function kickstartContext(i: KsContextInput): Record<string, unknown> {
  return {
    node: i.node,
    source: {
      kind: i.source.kind,
      url: i.source.location,
      sha256: i.source.sha256 ?? '',
      line: sourceLine(i.source),
      ostreecontainer: i.source.kind === 'ostreecontainer',
      liveimg: i.source.kind === 'liveimg',
      tree: i.source.kind === 'url',
    },
    callback: { url: i.callback.url, token: i.callback.token, header: TOKEN_HEADER_NAME, header_line: `${TOKEN_HEADER_NAME}: ${i.callback.token}` },
    pull_secret: i.pullSecret,
    insecure_registry: i.insecureRegistry ?? '',
    authorized_keys: i.authorizedKeys,
    seed_dir: SEED_DIR,
    has_config_drive: (i.configDrive ?? []).length > 0,
    config_drive: (i.configDrive ?? []).map((f) => {
      const file = `${SEED_DIR}/${f.path}`;
      return { path: f.path, file, dir: file.replace(/\/[^/]*$/, ''), base64: f.data.toString('base64').replace(/.{76}(?!$)/g, '$&\n') };
    }),
  };
}

export interface RenderInput {
  /** The template text and where it came from (errors name it). */
  template: string;
  templateFile: string;
  vars: Vars;
  context: Record<string, unknown>;
  host?: string;
  task?: string;
  onSecret?: (value: string) => void;
}

export function renderKickstart(r: RenderInput): string {
  return renderText(r.template, {
    vars: { ...r.vars, ks: r.context },
    baseDir: r.templateFile.replace(/\/[^/]*$/, '') || '/',
    pos: { file: r.templateFile, line: 1, col: 1 },
    ...(r.host ? { host: r.host } : {}),
    ...(r.task ? { task: r.task } : {}),
    ...(r.onSecret ? { onSecret: r.onSecret } : {}),
  });
}
