// The shape every tsbm helper has: positional arguments in, a value out. Handlebars appends an
// options object to every call; this strips it and hands the render context over instead.
import type { HelperOptions } from 'handlebars';
import type { TemplateContext } from '../types.js';

type HelperFn = (
  args: unknown[],
  ctx: TemplateContext | undefined,
  hash: Record<string, unknown>,
) => unknown;

export interface HelperDef {
  name: string;
  /** One line for docs and `tsbm validate` messages. */
  summary: string;
  fn: HelperFn;
}

export function toHandlebars(def: HelperDef): (...args: unknown[]) => unknown {
  return (...all: unknown[]) => {
    const options = all[all.length - 1] as HelperOptions;
    const args = all.slice(0, -1);
    const data = options.data as { tsbm?: TemplateContext } | undefined;
    return def.fn(args, data?.tsbm, (options.hash ?? {}) as Record<string, unknown>);
  };
}
