// The work behind `tsbm config`: every setting of the table with its value and source.
import { CONFIG_OPTIONS, type ConfigOption, type SettingName } from '../config/options.js';
import { describeSource } from '../config/settings.js';
import { commandSettings } from './config-defaults.js';
import { redactor } from './context.js';

export function configCommand(json: boolean): string {
  const s = commandSettings();
  const rows = (Object.entries(CONFIG_OPTIONS) as Array<[SettingName, ConfigOption]>).map(([name, o]) => ({
    name,
    section: o.section,
    value: s.get(name) ?? null,
    source: describeSource(s.source(name)),
    env: o.env,
    ...(o.flag ? { flag: o.flag } : {}),
    description: o.description,
  }));
  if (json) return `${redactor.redact(JSON.stringify({ file: s.file ?? null, settings: rows }, null, 2))}\n`;
  const shown = (v: unknown) => (v === null ? '(not set)' : Array.isArray(v) ? v.join(',') : String(v));
  const lines = [`config file: ${s.file ?? '(none found)'}`];
  for (const r of rows) lines.push(`[${r.section}] ${r.name} = ${shown(r.value)}  (${r.source}; ${r.env}${r.flag ? `; ${r.flag}` : ''})`);
  return `${redactor.redact(lines.join('\n'))}\n`;
}
