// A minimal line diff for --diff output: LCS on lines, printed as -/+/space lines.
// Big inputs are summarised instead, so a stray binary file cannot stall the renderer.

const MAX_CELLS = 4_000_000;

export function diffLines(before: string, after: string, label = 'file'): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const out = [`--- before: ${label}`, `+++ after: ${label}`];
  if (a.length * b.length > MAX_CELLS) {
    out.push(`(diff too large to show: ${a.length} -> ${b.length} lines)`);
    return out;
  }
  // lcs[i][j] = length of the LCS of a[i..] and b[j..]
  const lcs: Uint32Array[] = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(` ${a[i]}`);
      i++;
      j++;
    } else if (i < a.length && (j >= b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      out.push(`-${a[i]}`);
      i++;
    } else {
      out.push(`+${b[j]}`);
      j++;
    }
  }
  return out;
}
