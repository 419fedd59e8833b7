// Drop-in files podman reads on the ramdisk. Values come from operator data (registry host
// names), so they are TOML-quoted, never pasted raw.
function tomlString(s: string): string {
  return JSON.stringify(s); // JSON string escapes are valid TOML basic-string escapes
}

/** IPA runs podman on a ramdisk whose root is not pivot_root-able (initramfs). */
export const NO_PIVOT_ROOT_CONF =
  '# written by tsbm: the ramdisk root cannot be pivot_root-ed\n[engine]\nno_pivot_root = true\n';

export interface Mirror {
  /** Registry as the image reference names it, e.g. quay.io. */
  prefix: string;
  /** Mirrors tried first, e.g. mirror.lab:5000. */
  mirrors: string[];
  insecure?: boolean;
  /** The mirrors alone are plain HTTP (tsbm's own image mirror), the registry not. */
  insecureMirrors?: boolean;
}

/** registries.conf.d drop-in: mirrors per registry and/or plain-HTTP (insecure) registries. */
export function registriesConf(mirrors: Mirror[], insecureRegistries: string[]): string {
  const out = ['# written by tsbm'];
  const seen = new Set<string>();
  for (const m of mirrors) {
    seen.add(m.prefix);
    out.push('', '[[registry]]', `location = ${tomlString(m.prefix)}`);
    if (m.insecure || insecureRegistries.includes(m.prefix)) out.push('insecure = true');
    for (const mir of m.mirrors) {
      out.push('', '[[registry.mirror]]', `location = ${tomlString(mir)}`);
      if (m.insecure || m.insecureMirrors) out.push('insecure = true');
    }
  }
  for (const r of insecureRegistries) {
    if (seen.has(r)) continue;
    out.push('', '[[registry]]', `location = ${tomlString(r)}`, 'insecure = true');
  }
  return `${out.join('\n')}\n`;
}
