// The work behind `tsbm validate`: run every check, print one line per error (or one JSON
// object), return the exit code. Every line passes through the CLI's redactor.
import { EXIT, TsbmError } from '../errors.js';
import type { ValidateOptions } from '../playbook/validate.js';
import { redactor } from './context.js';

export interface ValidateFlags {
  inventory?: string[];
  extraVars?: string[];
  output?: string;
}

export interface ErrorRecord {
  file: string | null;
  line: number | null;
  col: number | null;
  message: string;
  hint: string | null;
}

function record(e: TsbmError): ErrorRecord {
  return {
    file: e.pos?.file ?? null,
    line: e.pos?.line ?? null,
    col: e.pos?.col ?? null,
    message: redactor.redact(e.message),
    hint: e.hint ? redactor.redact(e.hint) : null,
  };
}

/** Collects every problem in the playbooks (and inventories); never throws for operator mistakes. */
export async function collectValidationErrors(
  playbooks: string[],
  flags: ValidateFlags,
): Promise<TsbmError[]> {
  const { validatePlaybooks } = await import('../playbook/validate.js');
  const opts: ValidateOptions = {};
  const errors: TsbmError[] = [];
  try {
    if (flags.extraVars?.length) {
      const { parseExtraVars } = await import('./extra-vars.js');
      opts.extraVars = parseExtraVars(flags.extraVars);
      redactor.addFromVars(opts.extraVars);
    }
    const { inventoryChecks } = await import('../playbook/validate-inventory.js');
    Object.assign(opts, await inventoryChecks(flags.inventory ?? [], playbooks, (e) => errors.push(e)));
  } catch (e) {
    if (e instanceof TsbmError) {
      errors.push(e);
      return errors;
    }
    throw e;
  }
  errors.push(...validatePlaybooks(playbooks, opts));
  return errors;
}

export async function validateCommand(playbooks: string[], flags: ValidateFlags): Promise<number> {
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
