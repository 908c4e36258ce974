/**
 * HTTP-date parsing (RFC 9110 §5.6.7), written out by hand on purpose: a generic date parser
 * accepts far more than the grammar (it reads `120` as the year 120, `1.5` as January 5th, and
 * depends on the platform), and a header value that is not a valid date must be ignored, not
 * guessed at.
 */

import { InvalidOptionError } from '../core/errors.js';

const MS_PER_DAY = 86_400_000;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

// IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
const IMF_FIXDATE = /* @__PURE__ */ new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
// rfc850-date (obsolete): Sunday, 06-Nov-94 08:49:37 GMT
const RFC850_DATE = /* @__PURE__ */ new RegExp(`^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
// asctime-date (obsolete): Sun Nov  6 08:49:37 1994 — the day is two digits or a space and one digit.
const ASCTIME_DATE = /* @__PURE__ */ new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} (\\d{2}| \\d) ${TIME} (\\d{4})$`);

/** Days from 1970-01-01 to the given proleptic Gregorian date (month 1–12); H. Hinnant's days_from_civil. */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const monthFromMarch = (month + 9) % 12;
  const dayOfYear = Math.floor((153 * monthFromMarch + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** The proleptic Gregorian year of a time in ms since the epoch (the inverse of daysFromCivil, year only). */
function yearOf(ms: number): number {
  const z = Math.floor(ms / MS_PER_DAY) + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  // Stryker disable next-line ArithmeticOperator: adding the 146 096 term, or subtracting the 36 524 one, moves yearOfEra by at most 8 days after 1 March, where the month-from-March correction below gives the same year back (the year is all yearOf returns; hint-parser-edges.test.ts checks every day of a 400-year cycle). The other changes on this line are killed.
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  // Days in January and February belong to the next civil year (the era's years start in March).
  return yearOfEra + era * 400 + (monthFromMarch >= 10 ? 1 : 0);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

function toEpochMs(year: number, monthName: string, day: number, hour: number, minute: number, second: number): number | undefined {
  const month = MONTHS.indexOf(monthName) + 1;
  // second 60 is a leap second (RFC 9110 §5.6.7); it reads as the first second of the next minute.
  if (day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = daysFromCivil(year, month, day) * MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000;
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * Parses an HTTP-date (RFC 9110 §5.6.7) into milliseconds since the Unix epoch, or `undefined` when
 * `value` is not one. Accepts the three forms senders have used:
 *
 * - IMF-fixdate, the one to send: `Sun, 06 Nov 1994 08:49:37 GMT`;
 * - the obsolete RFC 850 form: `Sunday, 06-Nov-94 08:49:37 GMT` — its two-digit year is read as the
 *   year with those digits within 50 years of `nowMs`'s year (RFC 9110: a date that would be more
 *   than 50 years ahead is in the past century);
 * - the obsolete asctime form: `Sun Nov  6 08:49:37 1994`.
 *
 * The grammar is matched exactly (case-sensitive names, single spaces, `GMT`), with the calendar
 * checked (no 31 April, 29 February only in leap years, hours ≤ 23). The weekday is required but
 * not checked against the date. Surrounding spaces and tabs are ignored. Nothing else is accepted
 * — no ISO 8601, no bare numbers, no time zones — and `Date.parse` is never called.
 *
 * What a server sends is never an error (a malformed date is `undefined`), but what your code
 * passes is checked, as `parseRetryAfter` checks it.
 *
 * @param value the header value; `null` or `undefined` (an absent header) gives `undefined`.
 * @param nowMs the current wall-clock time in ms since the epoch; only the RFC 850 form reads it. Default 0.
 * @returns ms since the epoch (a whole number of seconds), or `undefined`.
 * @throws InvalidOptionError when `value` is neither a string nor null/undefined (a number such as
 *   `120` is refused: a header's value is text), or when `nowMs` is not a finite number.
 * @example
 * ```ts
 * parseHttpDate('Wed, 21 Oct 2015 07:28:10 GMT'); // 1445412490000
 * parseHttpDate('120'); // undefined: not a date
 * ```
 */
export function parseHttpDate(value: string | null | undefined, nowMs = 0): number | undefined {
  if (typeof value !== 'string') return absentHeader('parseHttpDate', value);
  checkNowMs('parseHttpDate', nowMs);
  const text = trimOws(value);
  let m = IMF_FIXDATE.exec(text);
  if (m !== null) return toEpochMs(Number(m[3]), m[2]!, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
  m = ASCTIME_DATE.exec(text);
  // A one-digit day comes with its leading space (` 6`), which Number() skips.
  if (m !== null) return toEpochMs(Number(m[6]), m[1]!, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]));
  m = RFC850_DATE.exec(text);
  if (m !== null) {
    const nowYear = yearOf(nowMs);
    let year = nowYear - (((nowYear % 100) + 100) % 100) + Number(m[3]);
    if (year > nowYear + 50) year -= 100;
    else if (year <= nowYear - 50) year += 100;
    return toEpochMs(year, m[2]!, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
  }
  return undefined;
}

/**
 * @internal What a header parser is given instead of the header's text: `null`/`undefined` (an absent
 * header) is no value; anything else is the caller's bug.
 * @throws InvalidOptionError naming `owner` and the value.
 */
export function absentHeader(owner: string, value: unknown): undefined {
  if (value === null || value === undefined) return undefined;
  throw new InvalidOptionError(owner, 'value', value, "must be the header's text (a string), or null or undefined when the header is absent");
}

/**
 * @internal A caller's "now" for an HTTP-date: a missing or broken one would silently turn every
 * date into no hint.
 * @throws InvalidOptionError naming `owner` and the value.
 */
export function checkNowMs(owner: string, nowMs: unknown): void {
  if (typeof nowMs !== 'number' || !(nowMs > -Infinity && nowMs < Infinity)) {
    throw new InvalidOptionError(owner, 'nowMs', nowMs, 'must be a finite number of ms since the epoch, such as Date.now()');
  }
}

/** @internal Removes leading and trailing optional whitespace (spaces and tabs, RFC 9110 §5.6.3). */
export function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: past the end charCodeAt gives NaN, which stops the loop as well.
  while (start < end && isOws(value.charCodeAt(start))) start++;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: below start every character is blank (the first loop skipped them), so going on ends at NaN before index 0, and slice(start, end < start) is '' all the same.
  while (end > start && isOws(value.charCodeAt(end - 1))) end--;
  // The whole range gives the string itself back (V8 makes no copy), so there is no shortcut for it.
  return value.slice(start, end);
}

/** A space or a tab: optional whitespace (OWS) in RFC 9110's grammar. */
function isOws(code: number): boolean {
  return code === 32 || code === 9;
}
