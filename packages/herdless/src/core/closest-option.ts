/**
 * The name among `known` that `key` most likely misspells, for an unknown option's "did you mean":
 * at most two edits apart, three for a key of 12 letters or more (Levenshtein: insertions, deletions,
 * substitutions; a long name is misspelt by a dropped syllable, `maxRejectProbability`), letter case
 * ignored, and fewer edits than `key` has letters; the first listed wins a tie. `undefined` when none is
 * close, or `key` is 64 characters or longer (no misspelling of an option name; the work stays small).
 *
 * @example
 * ```ts
 * closestOption('maxAtempts', ['maxAttempts', 'backoff']); // 'maxAttempts'
 * closestOption('timeout', ['maxAttempts', 'backoff']); // undefined
 * ```
 */
export function closestOption(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let least = key.length >= 12 ? 4 : 3;
  for (const name of known) {
    // One row of the edit-distance table, updated in place: row[j] is the distance from the
    // letters of key read so far to the first j letters of name.
    const row = [...name, ''].map((_, j) => j);
    for (const c of key.length < 64 ? key.toLowerCase() : '') {
      let diagonal = row[0]!++;
      [...name.toLowerCase()].forEach((d, j) => {
        const up = row[j + 1]!;
        row[j + 1] = Math.min(up + 1, row[j]! + 1, diagonal + (c === d ? 0 : 1));
        diagonal = up;
      });
    }
    const distance = key.length < 64 ? row.pop()! : least;
    if (distance < least && distance < key.length) {
      least = distance;
      best = name;
    }
  }
  return best;
}
