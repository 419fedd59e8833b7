// File modes as playbooks write them: '0644' / '644' strings, or bare numbers. YAML 1.2 reads
// `mode: 0644` as the decimal number 644, so a number's digits are taken as the octal you wrote.
import { TsbmError } from '../../errors.js';

export function parseMode(mode: string | number | undefined): number | undefined {
  if (mode === undefined) return undefined;
  const text = typeof mode === 'number' ? String(mode) : mode.trim().replace(/^0o/i, '');
  if (!/^[0-7]{1,4}$/.test(text)) {
    throw new TsbmError('runtime', `invalid file mode ${JSON.stringify(mode)}`, {
      hint: "write the mode as an octal string, e.g. mode: '0644' (symbolic modes are not supported)",
    });
  }
  return Number.parseInt(text, 8);
}

export function formatMode(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, '0');
}
