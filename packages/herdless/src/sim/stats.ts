/** Mean, minimum and maximum of a series over seeds. */
export interface Summary {
  mean: number;
  min: number;
  max: number;
}

/**
 * Summarises values the way the article's tables do: the mean is a plain left-to-right sum
 * divided by the count (no compensated summation), so that printed digits match.
 * @throws RangeError for an empty list.
 */
export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) throw new RangeError('summarize: no values');
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { mean: sum / values.length, min, max };
}
