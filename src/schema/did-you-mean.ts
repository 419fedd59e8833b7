// "Did you mean" suggestions for unknown keys, modules and names: the closest candidate by
// edit distance, only when it is close enough to be a plausible typo.

/** Damerau-Levenshtein (optimal string alignment) distance: a swapped pair of letters counts as one edit. */
export function editDistance(a: string, b: string): number {
  const m = a.length;
  const n = b.length;
  const d: number[][] = Array.from({ length: m + 1 }, (_, i) => [i, ...new Array<number>(n).fill(0)]);
  for (let j = 0; j <= n; j++) d[0]![j] = j;
  for (let i = 1; i <= m; i++) {
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[m]![n]!;
}

function isSubsequence(word: string, of: string): boolean {
  let i = 0;
  for (const ch of of) if (ch === word[i]) i++;
  return i === word.length;
}

/** Among equally distant candidates: same letters (a swap) beats a dropped letter beats the rest. */
function tieScore(word: string, cand: string): number {
  const c = cand.toLowerCase();
  const sorted = (x: string) => [...x].sort().join('');
  if (sorted(word) === sorted(c)) return 2;
  return isSubsequence(word, c) ? 1 : 0;
}

/** The closest candidate, or undefined when none is within a third of the word's length (at least 1, at most 3). */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  // Very long input (hostile keys) gets no suggestion rather than a quadratic cost.
  if (word.length > 64) return undefined;
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  let best: string | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  const lower = word.toLowerCase();
  for (const c of candidates) {
    if (c === word) return c;
    const dist = editDistance(lower, c.toLowerCase());
    const better =
      dist < bestD || (dist === bestD && best !== undefined && tieScore(lower, c) > tieScore(lower, best));
    if (better) {
      best = c;
      bestD = dist;
    }
  }
  return bestD <= limit ? best : undefined;
}

/** ` (did you mean "x"?)` or an empty string, for appending to messages. */
export function suggestion(word: string, candidates: Iterable<string>): string {
  const s = didYouMean(word, candidates);
  return s === undefined ? '' : ` (did you mean "${s}"?)`;
}
