/**
 * The name among `names` that `typo` most likely misspells, or `undefined` when none is close: at
 * most two edits (a third for names of nine letters or more), letter case ignored, or one name
 * being the start of the other (`horizon` for `horizonMs`). A typo of several words (the lab's policy
 * names: `3 retries + jitter`) is read word by word first: the name that has more of its words wins
 * before edits are counted (`3 retry` means `3 retries`, two edits further than `no retry`: the count
 * a user typed is not the misspelt part), and a name holding every word of it is close however many
 * words it adds (`3 retries + budget` → `3 retries + Finagle budget`). A word is had when the name
 * has it, letter case ignored, or a word of four letters or more one edit from it or sharing its
 * first four letters (`retry`, `retries`). Further ties go to the name that keeps more of the typo's
 * first letters, then to the first listed.
 */
export function closestName(typo: string, names: readonly string[]): string | undefined {
  const t = typo.toLowerCase();
  const words = wordsOf(t);
  let best: { name: string; had: number; distance: number; kept: number } | undefined;
  for (const name of names) {
    const n = name.toLowerCase();
    const prefix = t.length >= 4 && (n.startsWith(t) || t.startsWith(n));
    const distance = prefix ? 1 : editDistance(t, n);
    const had = words.length < 2 ? 0 : wordsHad(words, wordsOf(n));
    if (distance > (Math.max(t.length, n.length) >= 9 ? 3 : 2) && (had === 0 || had < words.length)) continue;
    let kept = 0;
    while (kept < n.length && kept < t.length && n[kept] === t[kept]) kept++;
    const better = best === undefined || had > best.had || (had === best.had && (distance < best.distance || (distance === best.distance && kept > best.kept)));
    if (better) best = { name, had, distance, kept };
  }
  return best?.name;
}

/** The words of a name: runs of anything but spaces and `+`, and each `+` (`3 retries+jitter` is four words). */
function wordsOf(name: string): string[] {
  return name.match(/[^\s+]+|\+/g) ?? [];
}

/** How many of `words` one of `of` stands for: the same word, or for four letters or more one edit away or the same first four letters. */
function wordsHad(words: readonly string[], of: readonly string[]): number {
  const same = (a: string, b: string): boolean => a === b || (a.length >= 4 && b.length >= 4 && (a.slice(0, 4) === b.slice(0, 4) || editDistance(a, b) <= 1));
  return words.filter((w) => of.some((o) => same(w, o))).length;
}

/**
 * ` (did you mean "full jitter"?)` for a misspelt or miscased word of a file's enumeration. A file
 * keeps the exact spelling (it is data other tools read back); the refusal names the fix.
 */
export function nearValue(value: unknown, values: readonly unknown[]): string {
  const words = values.filter((v): v is string => typeof v === 'string');
  const near = typeof value === 'string' ? closestName(value, words) : undefined;
  return near === undefined ? '' : ` (did you mean ${JSON.stringify(near)}?)`;
}

/** Levenshtein distance (insertions, deletions, substitutions), for short names; bounded work for long ones. */
function editDistance(a: string, b: string): number {
  // Field names are short; a long key in a hostile file is no misspelling of one.
  if (a.length > 64 || b.length > 64) return Infinity;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}
