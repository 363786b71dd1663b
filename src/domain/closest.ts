// The nearest known word to a mistyped one: "did you mean" for the command line's unknown commands and options
// (src/cli/commands/args.ts) and for unknown configuration keys and values (src/config/load.ts).

/** The candidate nearest to `word` by edit distance (or the only one it starts), if any is near enough. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const prefixed = candidates.filter((c) => c.startsWith(word));
  if (word.length >= 3 && prefixed.length === 1) return prefixed[0];
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.min(3, Math.floor(word.length / 3)));
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d <= bestDistance && (best === undefined || d < editDistance(word, best))) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance, a swap of two neighbours counting as one edit. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}
