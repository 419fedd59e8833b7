// The work behind `tsbm validate`: run every check, print one line per error (or one JSON
// object), return the exit code. Every line passes through the CLI's redactor.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { EXIT, TsbmError } from '../errors.js';
import type { ValidateOptions } from '../playbook/validate.js';
import { redactor } from './context.js';
import type { VaultFlags } from './vault-options.js';

export interface ValidateFlags extends VaultFlags {
  inventory?: string[];
  extraVars?: string[];
  output?: string;
  rolesPath?: string[];
}

interface ErrorRecord {
  file: string | null;
  line: number | null;
  col: number | null;
  message: string;
  hint: string | null;
  /** The hosts a variable is missing for (undefined variables only). */
  hosts?: string[];
}

function record(e: TsbmError): ErrorRecord {
  const hosts = (e as { hosts?: readonly string[] }).hosts;
  return {
    file: e.pos?.file ?? null,
    line: e.pos?.line ?? null,
    col: e.pos?.col ?? null,
    message: redactor.redact(e.message),
    hint: e.hint ? redactor.redact(e.hint) : null,
    ...(hosts ? { hosts: [...hosts] } : {}),
  };
}

/** Collects every problem in the playbooks (and inventories); never throws for operator mistakes. */
export async function collectValidationErrors(
  playbooks: string[],
  flags: ValidateFlags,
): Promise<TsbmError[]> {
  const { validatePlaybooks } = await import('../playbook/validate.js');
  const { checkPattern } = await import('../playbook/validate-inventory.js');
  const opts: ValidateOptions = { checkPattern };
  const { splitPath } = await import('./run-options.js');
  const rolesPath = splitPath(flags.rolesPath);
  if (rolesPath.length > 0) opts.rolesPath = rolesPath;
  const errors: TsbmError[] = [];
  try {
    if (flags.extraVars?.length) {
      const { parseExtraVars } = await import('../run/extra-vars.js');
      opts.extraVars = parseExtraVars(flags.extraVars);
      redactor.addFromVars(opts.extraVars);
    }
  } catch (e) {
    if (e instanceof TsbmError) {
      errors.push(e);
      return errors;
    }
    throw e;
  }
  let tmp: string | undefined;
  try {
    const paths = flags.inventory ?? [];
    if (paths.length > 0) {
      // A `tsbm_sim` inventory has hosts once its lab runs; validate starts nothing, so it checks
      // against the inventory that lab would write.
      const { loadSimLab } = await import('../inventory/sim-lab.js');
      const { previewSimInventories } = await loadSimLab();
      tmp = mkdtempSync(join(tmpdir(), 'tsbm-validate-'));
      const files = await previewSimInventories(paths, tmp);
      const { addPlaybookDirVars, loadInventories } = await import('../inventory/load.js');
      const { validateInventory } = await import('../playbook/validate-inventory.js');
      const inv = loadInventories(files);
      for (const d of new Set(playbooks.map((p) => dirname(p)))) addPlaybookDirVars(inv, d);
      opts.inventory = validateInventory(inv, playbooks[0] ? dirname(playbooks[0]) : '.');
    }
  } catch (e) {
    // the inventory's own error is reported; the playbooks are still checked, without variables
    if (!(e instanceof TsbmError)) throw e;
    errors.push(e);
  } finally {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
  errors.push(...validatePlaybooks(playbooks, opts));
  return errors;
}

export async function validateCommand(playbooks: string[], given: ValidateFlags): Promise<number> {
  const { commandSettings, inventoriesOr, runDefaults } = await import('./config-defaults.js');
  const cfg = commandSettings();
  await (await import('./vault-setup.js')).setupVault(given, cfg);
  const rolesPath = [...(given.rolesPath ?? []), ...(runDefaults(cfg).rolesPath ?? [])];
  const flags: ValidateFlags = { ...given, inventory: inventoriesOr(given.inventory, cfg), ...(rolesPath.length ? { rolesPath } : {}) };
  const errors = await collectValidationErrors(playbooks, flags);
  if (flags.output === 'json') {
    process.stdout.write(`${JSON.stringify({ ok: errors.length === 0, errors: errors.map(record) })}\n`);
  } else {
    for (const e of errors) process.stdout.write(`${redactor.redact(e.oneLine())}\n`);
    const files = `${playbooks.length} playbook${playbooks.length === 1 ? '' : 's'}`;
    process.stderr.write(
      errors.length === 0
        ? `tsbm validate: ok (${files})\n`
        : `tsbm validate: ${errors.length} error${errors.length === 1 ? '' : 's'} in ${files}\n`,
    );
  }
  if (errors.length === 0) return EXIT.ok;
  // Option mistakes (a bad -e) keep their own exit code; everything else is a parse error.
  return errors.every((e) => e.kind === 'options') ? EXIT.badOptions : EXIT.unreachableOrParse;
}
