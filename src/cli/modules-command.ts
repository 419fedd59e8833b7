// Implementation of `tsbm modules`, loaded only when the command runs (it pulls in every module).
import { optionsError } from '../errors.js';
import { allModules, getModule } from '../modules/registry.js';
import { suggestion } from '../schema/did-you-mean.js';
import { moduleDocText, moduleListText } from './module-docs.js';

export function modulesCommand(name: string | undefined, json: boolean): string {
  if (name === undefined) {
    const defs = allModules();
    if (!json) return moduleListText(defs);
    const out = Object.fromEntries(
      defs.map((d) => [d.name, { summary: d.summary, runsOn: d.runsOn, checkMode: d.checkMode, args: d.args }]),
    );
    return `${JSON.stringify(out, null, 2)}\n`;
  }
  const def = getModule(name);
  if (!def) {
    throw optionsError(
      `unknown module "${name}"${suggestion(name, allModules().map((m) => m.name))}`,
      'tsbm modules lists them all',
    );
  }
  return json ? `${JSON.stringify(def.args, null, 2)}\n` : moduleDocText(def, Math.min(100, process.stdout.columns ?? 100));
}
