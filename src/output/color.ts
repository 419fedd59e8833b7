// ANSI colours by meaning (status), off unless the renderer was asked for them.
import type { HostStatus } from './events.js';

const CODES = {
  green: 32,
  yellow: 33,
  red: 31,
  cyan: 36,
  magenta: 35,
  gray: 90,
  bold: 1,
  dim: 2,
} as const;
export type ColorName = keyof typeof CODES;

export type Paint = (name: ColorName, text: string) => string;

export function painter(enabled: boolean): Paint {
  return enabled ? (name, text) => `\x1b[${CODES[name]}m${text}\x1b[0m` : (_name, text) => text;
}

export const STATUS_COLOR: Record<HostStatus, ColorName> = {
  ok: 'green',
  changed: 'yellow',
  failed: 'red',
  unreachable: 'red',
  skipped: 'cyan',
  rescued: 'red', // a failure first: the block's rescue runs because of it
  ignored: 'cyan',
  interrupted: 'magenta',
};

/** Strips ANSI escape sequences (for width calculations and tests). */
export function stripAnsi(text: string): string {
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
}
