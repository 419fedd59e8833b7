// What the project config file (tsbm.cfg) and TSBM_* variables give the commands, read once
// per command through src/config/settings.ts. A flag given on the command line always wins.
import { type Settings, settings } from '../config/settings.js';
import type { RunDefaults } from './run-options.js';

/** The settings, with their warnings (a config file passed over) said once on stderr. */
export function commandSettings(write: (text: string) => void = (t) => process.stderr.write(t)): Settings {
  const s = settings();
  if (!warned) for (const w of s.warnings) write(`tsbm: warning: ${w}\n`);
  warned = true;
  return s;
}
let warned = false;

/** Defaults for `tsbm run` / `tsbm validate` options the command line did not give. */
export function runDefaults(s: Settings): RunDefaults {
  const inventory = s.get('inventory');
  const forks = s.get('forks');
  // TSBM_ROLES_PATH is read by the playbook loader (also for library callers); the file's
  // roles_path applies only when that variable is not set, as Ansible's precedence says.
  const rolesPath = s.fromFile('roles_path');
  return {
    ...(s.get('force_handlers') ? { forceHandlers: true } : {}),
    ...(inventory?.length ? { inventory } : {}),
    ...(forks !== undefined ? { forks } : {}),
    ...(rolesPath?.length ? { rolesPath } : {}),
  };
}

/** `-i` as given, else the configured inventories. */
export function inventoriesOr(given: readonly string[] | undefined, s: Settings): string[] {
  const list = (given ?? []).map((i) => i.trim()).filter(Boolean);
  return list.length > 0 ? list : [...(s.get('inventory') ?? [])];
}
