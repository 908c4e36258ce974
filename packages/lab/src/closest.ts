/**
 * The name among `names` that `typo` most likely misspells, or `undefined` when none is close: at
 * most two edits (a third for names of nine letters or more), letter case ignored, or one name
 * being the start of the other (`horizon` for `horizonMs`). Ties go to the name that keeps more of
 * the typo's first letters, then to the first listed.
 */
export function closestName(typo: string, names: readonly string[]): string | undefined {
  const t = typo.toLowerCase();
  let best: { name: string; distance: number; kept: number } | undefined;
  for (const name of names) {
    const n = name.toLowerCase();
    const prefix = t.length >= 4 && (n.startsWith(t) || t.startsWith(n));
    const distance = prefix ? 1 : editDistance(t, n);
    if (distance > (Math.max(t.length, n.length) >= 9 ? 3 : 2)) continue;
    let kept = 0;
    while (kept < n.length && kept < t.length && n[kept] === t[kept]) kept++;
    if (best === undefined || distance < best.distance || (distance === best.distance && kept > best.kept)) best = { name, distance, kept };
  }
  return best?.name;
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
