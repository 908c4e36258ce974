/**
 * A non-negative number truncated to 3 decimal places, as an integer count of thousandths —
 * gRFC A6's rule for `maxTokens` and `tokenRatio` ("up to 3 decimal places are supported"). It
 * reads the number's shortest decimal form, so `1.005` gives 1005 where `1.005 * 1000` would give
 * 1004.999…; anything below 0.001 gives 0.
 *
 * Internal; the caller has checked `x` is finite and ≥ 0.
 */
export function thousandths(x: number): number {
  const text = String(x);
  const e = text.indexOf('e');
  // Stryker disable next-line EqualityOperator: e is never 0 (a number's text starts with a digit).
  if (e >= 0) {
    // 1e21 and above print in exponent form and are whole; below 1e-6 they are < 0.001.
    return text[e + 1] === '-' ? 0 : x * 1000;
  }
  const dot = text.indexOf('.');
  // Stryker disable next-line EqualityOperator: dot is never 0 (a number's text starts with a digit).
  if (dot < 0) return x * 1000;
  const whole = Number(text.slice(0, dot));
  const frac = (text.slice(dot + 1) + '000').slice(0, 3);
  return whole * 1000 + Number(frac);
}
