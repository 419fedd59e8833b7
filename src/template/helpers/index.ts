// Every user-visible helper, in the order docs/templating.md lists them.
import { dataHelpers } from './data.js';
import type { HelperDef } from './define.js';
import { logicHelpers } from './logic.js';
import { lookupHelpers } from './lookups.js';
import { stringHelpers } from './strings.js';

export const HELPERS: readonly HelperDef[] = [
  ...logicHelpers,
  ...stringHelpers,
  ...dataHelpers,
  ...lookupHelpers,
];

/** Helpers whose direct variable arguments may be undefined without an error. */
export const SOFT_ARG_HELPERS: ReadonlySet<string> = new Set(['defined', 'default']);
