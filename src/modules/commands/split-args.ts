// Splits a command string into argv the way sh would tokenize words (quotes, backslashes),
// without running a shell: no variables, globs, pipes or redirections are interpreted.
import { TsbmError } from '../../errors.js';

export function splitArgs(input: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inWord = false;
  let i = 0;
  const unclosed = (q: string) =>
    new TsbmError('runtime', `unterminated ${q} in command: ${input}`, { hint: `close the ${q} or pass argv as a list` });
  while (i < input.length) {
    const c = input[i]!;
    if (c === "'") {
      const end = input.indexOf("'", i + 1);
      if (end < 0) throw unclosed('single quote');
      cur += input.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      i++;
      for (;;) {
        if (i >= input.length) throw unclosed('double quote');
        const d = input[i]!;
        if (d === '"') break;
        // Inside double quotes a backslash only escapes these (as in sh).
        if (d === '\\' && i + 1 < input.length && '"\\$`\n'.includes(input[i + 1]!)) {
          if (input[i + 1] !== '\n') cur += input[i + 1];
          i += 2;
          continue;
        }
        cur += d;
        i++;
      }
      inWord = true;
      i++;
    } else if (c === '\\') {
      if (i + 1 < input.length) {
        if (input[i + 1] !== '\n') cur += input[i + 1];
        inWord = true;
      }
      i += 2;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(cur);
      cur = '';
      inWord = false;
      i++;
    } else {
      cur += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) out.push(cur);
  return out;
}
