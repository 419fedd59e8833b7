// Comparison, boolean logic and presence helpers.
import { HelperFail } from '../fail.js';
import { truthy } from '../truthy.js';
import type { HelperDef } from './define.js';

function isNumeric(v: unknown): boolean {
  return typeof v === 'number' || (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v)));
}

/** Equality that treats 1 and '1' alike (YAML and Redfish disagree about types) and compares lists/maps by value. */
function looseEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((typeof a === 'number' || typeof b === 'number') && isNumeric(a) && isNumeric(b))
    return Number(a) === Number(b);
  if (a && b && typeof a === 'object' && typeof b === 'object')
    return JSON.stringify(a) === JSON.stringify(b);
  return false;
}

function order(name: string, a: unknown, b: unknown): number {
  if (isNumeric(a) && isNumeric(b)) return Number(a) - Number(b);
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  throw new HelperFail(
    name,
    `cannot compare ${typeof a} with ${typeof b}`,
    'compare two numbers or two strings',
  );
}

function arity(name: string, args: unknown[], min: number, max = min): void {
  if (args.length < min || args.length > max) {
    const want = min === max ? `${min}` : `${min} to ${max}`;
    throw new HelperFail(name, `takes ${want} argument(s), got ${args.length}`);
  }
}

const cmp = (name: string, test: (n: number) => boolean): HelperDef => ({
  name,
  summary: `compare two values (${name})`,
  fn: (args) => {
    arity(name, args, 2);
    return test(order(name, args[0], args[1]));
  },
});

export const logicHelpers: HelperDef[] = [
  {
    name: 'eq',
    summary: 'true when two values are equal',
    fn: (a) => {
      arity('eq', a, 2);
      return looseEqual(a[0], a[1]);
    },
  },
  {
    name: 'ne',
    summary: 'true when two values differ',
    fn: (a) => {
      arity('ne', a, 2);
      return !looseEqual(a[0], a[1]);
    },
  },
  cmp('lt', (n) => n < 0),
  cmp('le', (n) => n <= 0),
  cmp('gt', (n) => n > 0),
  cmp('ge', (n) => n >= 0),
  {
    name: 'and',
    summary: 'true when every argument is truthy',
    fn: (a) => {
      arity('and', a, 1, Number.MAX_SAFE_INTEGER);
      return a.every(truthy);
    },
  },
  {
    name: 'or',
    summary: 'true when any argument is truthy',
    fn: (a) => {
      arity('or', a, 1, Number.MAX_SAFE_INTEGER);
      return a.some(truthy);
    },
  },
  {
    name: 'not',
    summary: 'negate',
    fn: (a) => {
      arity('not', a, 1);
      return !truthy(a[0]);
    },
  },
  {
    name: 'defined',
    summary: 'true when a variable exists (its argument may be undefined)',
    fn: (a) => {
      arity('defined', a, 1);
      return a[0] !== undefined;
    },
  },
  {
    name: 'default',
    summary: 'the value, or a fallback when it is undefined or null (or falsy, with a third argument true)',
    fn: (a) => {
      arity('default', a, 2, 3);
      const [v, fallback, falsy] = a;
      if (v === undefined || v === null) return fallback;
      return falsy === true && !truthy(v) ? fallback : v;
    },
  },
  {
    name: 'contains',
    summary: 'list has item, string has substring, or map has key',
    fn: (a) => {
      arity('contains', a, 2);
      const [hay, needle] = a;
      if (Array.isArray(hay)) return hay.some((x) => looseEqual(x, needle));
      if (typeof hay === 'string') return hay.includes(String(needle));
      if (hay && typeof hay === 'object') return Object.hasOwn(hay, String(needle));
      return false;
    },
  },
  {
    name: 'len',
    summary: 'length of a list, string or map',
    fn: (a) => {
      arity('len', a, 1);
      const v = a[0];
      if (typeof v === 'string' || Array.isArray(v)) return v.length;
      if (v && typeof v === 'object') return Object.keys(v).length;
      throw new HelperFail('len', `cannot take the length of ${v === null ? 'null' : typeof v}`);
    },
  },
];
