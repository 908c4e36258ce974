import { describe, expect, it } from 'vitest';
import { parseHttpDate, parseRetryAfter, parseRetryAfterMs } from 'herdless/http';

// The edges of the HTTP hint parsers that http-retry-after.test.ts does not reach: calendar checks
// read on dates that are not in the past (a past date is no hint whether it is valid or not), the
// year of "now" that RFC 850's two-digit years are read against, on every day of a 400-year cycle,
// whitespace on one side only, and a missing value.
const NOW = Date.UTC(2015, 9, 21, 7, 28, 0);
const pad = (n: number): string => String(n).padStart(2, '0');

describe('parseHttpDate: the calendar (RFC 9110 §5.6.7)', () => {
  it.each(['Apr', 'Jun', 'Sep', 'Nov'])('%s has 30 days: the 30th parses, the 31st does not', (month) => {
    const index = ['Apr', 'Jun', 'Sep', 'Nov'].indexOf(month);
    const monthIndex = [3, 5, 8, 10][index]!;
    expect(parseHttpDate(`Fri, 30 ${month} 2099 00:00:00 GMT`)).toBe(Date.UTC(2099, monthIndex, 30));
    expect(parseHttpDate(`Fri, 31 ${month} 2099 00:00:00 GMT`)).toBeUndefined();
  });

  it('the other months have 31 days', () => {
    for (const [i, month] of ['Jan', 'Mar', 'May', 'Jul', 'Aug', 'Oct', 'Dec'].entries()) {
      expect(parseHttpDate(`Fri, 31 ${month} 2099 00:00:00 GMT`)).toBe(Date.UTC(2099, [0, 2, 4, 6, 7, 9, 11][i]!, 31));
    }
  });

  it('29 February only in leap years: 2096 and 2400 yes; 2099, 2100 and 2200 no', () => {
    expect(parseHttpDate('Wed, 29 Feb 2096 00:00:00 GMT')).toBe(Date.UTC(2096, 1, 29));
    expect(parseHttpDate('Wed, 29 Feb 2400 00:00:00 GMT')).toBe(Date.UTC(2400, 1, 29));
    expect(parseHttpDate('Wed, 28 Feb 2099 00:00:00 GMT')).toBe(Date.UTC(2099, 1, 28));
    for (const year of [2099, 2100, 2200]) expect(parseHttpDate(`Wed, 29 Feb ${year} 00:00:00 GMT`)).toBeUndefined();
    // A future date that does not exist is no hint either (the backoff applies).
    expect(parseRetryAfter('Sun, 29 Feb 2099 00:00:00 GMT', NOW)).toBeUndefined();
  });

  it('day 00 and second 61 are refused; second 60 (a leap second) reads as the next minute', () => {
    expect(parseHttpDate('Sun, 00 Nov 2099 08:49:37 GMT')).toBeUndefined();
    expect(parseHttpDate('Sun, 01 Nov 2099 08:49:61 GMT')).toBeUndefined();
    expect(parseHttpDate('Sun, 01 Nov 2099 08:49:60 GMT')).toBe(Date.UTC(2099, 10, 1, 8, 50, 0));
  });

  it('asctime with a one-digit day: the space before it is not part of the number', () => {
    expect(parseHttpDate('Sun Nov  6 08:49:37 2099')).toBe(Date.UTC(2099, 10, 6, 8, 49, 37));
  });

  it('a missing header (null, undefined) is no date; a value that is not text is the caller\'s bug (see http-date-inputs.test.ts)', () => {
    expect(parseHttpDate(null)).toBeUndefined();
    expect(parseHttpDate(undefined)).toBeUndefined();
    expect(() => parseHttpDate(1445412490000 as never)).toThrow(/^parseHttpDate: value must be the header's text/);
  });
});

describe("parseHttpDate: RFC 850 two-digit years are read against now's year", () => {
  it('every day of a 400-year cycle (2000-01-01 to 2400-12-31): yy = year + 50 is ahead, year + 51 is last century', () => {
    // Both edges of the 50-year window at once: a "now" year off by one either way moves one of them.
    const first = Date.UTC(2000, 0, 1) / 86_400_000;
    const last = Date.UTC(2400, 11, 31) / 86_400_000;
    const wrong: string[] = [];
    let year = 2000;
    let nextYearDay = Date.UTC(2001, 0, 1) / 86_400_000;
    for (let day = first; day <= last; day++) {
      if (day === nextYearDay) nextYearDay = Date.UTC(++year + 1, 0, 1) / 86_400_000;
      const nowMs = day * 86_400_000 + 43_200_000;
      const ahead = parseHttpDate(`Monday, 01-Jan-${pad((year + 50) % 100)} 00:00:00 GMT`, nowMs);
      const behind = parseHttpDate(`Monday, 01-Jan-${pad((year + 51) % 100)} 00:00:00 GMT`, nowMs);
      if (ahead !== Date.UTC(year + 50, 0, 1) || behind !== Date.UTC(year - 49, 0, 1)) wrong.push(new Date(nowMs).toISOString());
    }
    expect(wrong.slice(0, 5)).toEqual([]);
  });

  it('the first and last millisecond of a year count as that year', () => {
    expect(parseHttpDate('Monday, 01-Jan-65 00:00:00 GMT', Date.UTC(2015, 0, 1))).toBe(Date.UTC(2065, 0, 1));
    expect(parseHttpDate('Monday, 01-Jan-66 00:00:00 GMT', Date.UTC(2015, 11, 31, 23, 59, 59, 999))).toBe(Date.UTC(1966, 0, 1));
  });

  it('read against the default now (0, 1970): 20 is 2020, 21 is 1921; a NaN now is refused, not guessed at', () => {
    expect(parseHttpDate('Monday, 01-Jan-20 00:00:00 GMT')).toBe(Date.UTC(2020, 0, 1));
    expect(parseHttpDate('Monday, 01-Jan-21 00:00:00 GMT')).toBe(Date.UTC(1921, 0, 1));
    expect(() => parseHttpDate('Monday, 01-Jan-20 00:00:00 GMT', Number.NaN)).toThrow(/^parseHttpDate: nowMs must be a finite number/);
  });
});

describe('optional whitespace on one side only (RFC 9110 §5.6.3)', () => {
  it.each([' 5', '5 ', '\t5', '5\t', '\t \t5', '5 \t '])('Retry-After %j is 5 s', (value) => {
    expect(parseRetryAfter(value, NOW)).toBe(5000);
  });

  it.each([' 250.5', '250.5\t'])('retry-after-ms %j is 250.5 ms', (value) => {
    expect(parseRetryAfterMs(value)).toBe(250.5);
  });

  it('a date with a leading tab or a trailing space', () => {
    expect(parseHttpDate('\tWed, 21 Oct 2015 07:28:10 GMT')).toBe(Date.UTC(2015, 9, 21, 7, 28, 10));
    expect(parseHttpDate('Wed, 21 Oct 2015 07:28:10 GMT ')).toBe(Date.UTC(2015, 9, 21, 7, 28, 10));
  });
});
