// Turns whatever a template run threw into one TsbmError of kind 'template' that names the
// variable or helper, the task, the host and the position of the value in its YAML file.
import { TsbmError } from '../errors.js';
import { HelperFail, UndefinedVarFail } from './fail.js';
import { RewriteFail } from './rewrite.js';
import type { TemplateContext } from './types.js';

type Where = Pick<TemplateContext, 'pos' | 'task' | 'host'>;

function opts(where: Where | undefined, hint: string | undefined, cause: unknown) {
  return {
    ...(where?.pos ? { pos: where.pos } : {}),
    ...(where?.task ? { task: where.task } : {}),
    ...(where?.host ? { host: where.host } : {}),
    ...(hint ? { hint } : {}),
    cause,
  };
}

function suffix(where: Where | undefined): string {
  const parts: string[] = [];
  if (where?.task) parts.push(`in task "${where.task}"`);
  if (where?.host) parts.push(`for host ${where.host}`);
  return parts.length ? ` ${parts.join(' ')}` : '';
}

const TOKEN: Record<string, string> = {
  EOF: 'end of template (is a }} missing?)',
  INVALID: 'character',
  EQUALS: '"=" (use a helper: eq a b)',
  CLOSE: '}}',
  OPEN: '{{',
  CLOSE_SEXPR: '")"',
  OPEN_SEXPR: '"("',
};

/** Handlebars parse errors read "Parse error on line 1:\n...\n---^\nExpecting ..., got 'EOF'". */
function syntaxDetail(msg: string): string {
  const line = /line (\d+)/.exec(msg)?.[1];
  const got = /got '([A-Z_]+)'/.exec(msg)?.[1];
  const where = line ? ` on line ${line}` : '';
  if (got) return `unexpected ${TOKEN[got] ?? got.toLowerCase().replace(/_/g, ' ')}${where}`;
  const first = msg.split('\n')[0] ?? msg;
  return first.replace(/ - \d+:\d+$/, '');
}

export function toTemplateError(e: unknown, where: Where | undefined, isCondition = false): TsbmError {
  if (e instanceof TsbmError) return e;
  if (e instanceof UndefinedVarFail) {
    return new TsbmError(
      'template',
      `${e.message}${suffix(where)}`,
      opts(where, 'define it in the inventory, group_vars/host_vars or vars, or use `default x "value"`', e),
    );
  }
  if (e instanceof HelperFail)
    return new TsbmError('template', `${e.message}${suffix(where)}`, opts(where, e.hint, e));
  if (e instanceof RewriteFail) {
    const hint = isCondition ? CONDITION_HINT : e.hint;
    return new TsbmError('template', `template error: ${e.message}${suffix(where)}`, opts(where, hint, e));
  }
  const msg = e instanceof Error ? e.message : String(e);
  // Handlebars' own strict-mode lookups (left for ../ paths) read: "x" not defined in [object Object]
  const strict = /^"([^"]+)" not defined in /.exec(msg);
  if (strict) return toTemplateError(new UndefinedVarFail(strict[1]!, strict[1]!), where, isCondition);
  if (/^Parse error|^Expecting|^Lexical error|doesn't match|Invalid path/.test(msg)) {
    return new TsbmError(
      'template',
      `template syntax error: ${syntaxDetail(msg)}${suffix(where)}`,
      opts(where, isCondition ? CONDITION_HINT : 'check the {{ }} braces and quotes', e),
    );
  }
  return new TsbmError(
    'template',
    `template error: ${msg.split('\n')[0]}${suffix(where)}`,
    opts(where, undefined, e),
  );
}

const CONDITION_HINT =
  'conditions are Handlebars expressions, e.g. `eq power_state "On"`, `defined foo`, `not (defined foo)`, `and a b`';
