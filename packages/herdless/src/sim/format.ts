/**
 * Formats `x` with `digits` decimals (0–20) exactly as Python's `'%.Nf' % x` does: the exact
 * binary value is rounded, and an exact tie goes to the even digit. `Number.prototype.toFixed`
 * rounds the exact value too but breaks exact ties upward (`0.125.toFixed(2)` is "0.13" where
 * Python prints "0.12"); a mean over 20 seeds can land on such a tie.
 */
export function formatFixed(x: number, digits: number): string {
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  let out = a.toFixed(digits);
  // The exact decimal expansion (100 digits is exact for every value the lab prints).
  const exact = a.toFixed(100);
  const cut = exact.indexOf('.') + 1 + digits;
  if (/^50*$/.test(exact.slice(cut))) {
    const kept = exact.slice(0, digits === 0 ? cut - 1 : cut);
    if ((kept.charCodeAt(kept.length - 1) - 48) % 2 === 0) out = kept;
  }
  return x < 0 || Object.is(x, -0) ? `-${out}` : out;
}
