// The node store a command uses, from its flags and the settings: --state, else TSBM_STATE,
// else `state` in tsbm.cfg, else files in --lock-dir / lock_dir / TSBM_LOCK_DIR / the default.
// One function for every command that touches node state (tsbm run, tsbm nodes).
import { describeSource } from '../config/settings.js';
import { type NodeStoreSetting, resolveStoreSetting } from '../nodes/setting.js';
import { commandSettings } from './config-defaults.js';

export function storeSettingOf(flags: { state?: string | undefined; lockDir?: string | undefined }): NodeStoreSetting {
  const cfg = commandSettings();
  const fromFile = cfg.fromFile('state');
  return resolveStoreSetting({
    flag: flags.state,
    lockDir: flags.lockDir ?? cfg.get('lock_dir'),
    ...(fromFile ? { config: { value: fromFile, from: describeSource(cfg.source('state')) } } : {}),
  });
}
