// The work behind `tsbm inventory import --from-ironic FILE`: the inventory goes to --output (or
// stdout), the list of secrets to set and what is left to do to stderr.
import { readFileSync, writeFileSync } from 'node:fs';
import { optionsError } from '../errors.js';
import { importIronicNodes } from '../inventory/ironic-import.js';
import { checkOutputFile } from './output-file.js';

export function inventoryImportCommand(flags: ImportFlags): void {
  if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(flags.group)) throw optionsError(`--group "${flags.group}" is not a group name`, 'e.g. --group baremetal');
  if (flags.output) checkOutputFile('--output', flags.output);
  let text: string;
  try {
    text = readFileSync(flags.fromIronic === '-' ? 0 : flags.fromIronic, 'utf8');
  } catch (e) {
    throw optionsError(`--from-ironic ${flags.fromIronic}: ${(e as Error).message}`, 'give the file `baremetal node list --long -f json` wrote, or - for stdin');
  }
  const r = importIronicNodes(text, {
    group: flags.group,
    perNodeSecrets: flags.perNodeSecrets === true,
    source: flags.fromIronic === '-' ? 'stdin' : flags.fromIronic,
  });
  if (flags.output) {
    try {
      writeFileSync(flags.output, r.yaml, { flag: flags.force ? 'w' : 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw optionsError(`--output ${flags.output} exists`, 'add --force to replace it, or choose another file');
      throw e;
    }
  } else process.stdout.write(r.yaml);

  const lines = [`imported ${r.hosts.length} node${r.hosts.length === 1 ? '' : 's'}${flags.output ? ` into ${flags.output}` : ''}`];
  if (r.secrets.length) {
    lines.push('secrets, read from the environment at run time (export them first):');
    for (const s of r.secrets)
      lines.push(`  ${s.env}  ${s.field} of ${s.hosts.length} node${s.hosts.length === 1 ? '' : 's'}${s.valueInInput ? ' (the input held the value; it was not written)' : ''}`);
  }
  if (r.notes.length) lines.push('still to do:', ...r.notes.map((n) => `  - ${n}`));
  process.stderr.write(`${lines.join('\n')}\n`);
}

export interface ImportFlags {
  fromIronic: string;
  output?: string;
  group: string;
  perNodeSecrets?: boolean;
  force?: boolean;
}
