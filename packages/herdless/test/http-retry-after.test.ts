import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidOptionError } from 'herdless';
import { parseHttpDate, parseRetryAfter, parseRetryAfterMs, retryAfterFromHeaders } from 'herdless/http';

// The wall clock of MDN's Retry-After example: 21 Oct 2015 07:28:00 GMT.
const NOW = Date.UTC(2015, 9, 21, 7, 28, 0);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('parseRetryAfter: delay-seconds', () => {
  const cases: [string, number | undefined][] = [
    ['0', 0],
    ['5', 5_000],
    ['120', 120_000],
    ['007', 7_000],
    [' 3\t', 3_000], // optional whitespace around the value
    ['9999999999', 9_999_999_999_000], // huge: a long wait, never a date, never a crash
    ['-1', undefined],
    ['+3', undefined],
    ['1.5', undefined],
    ['1e3', undefined],
    ['0x10', undefined],
    ['', undefined],
    ['  ', undefined],
    ['soon', undefined],
    ['5, 5', undefined], // two header lines combined
    ['3 s', undefined],
    ['٣', undefined], // a non-ASCII digit
  ];
  it.each(cases)('%j → %s', (value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });

  it('absent header (null, undefined) → undefined', () => {
    expect(parseRetryAfter(null, NOW)).toBeUndefined();
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
  });

  it('400 digits stay a finite wait (2^53 − 1 ms)', () => {
    expect(parseRetryAfter('9'.repeat(400), NOW)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('property: any run of ASCII digits n → n × 1000 ms', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e9 }), (n) => {
        expect(parseRetryAfter(String(n), NOW)).toBe(n * 1000);
      }),
    );
  });
});

describe('parseRetryAfter: HTTP-date', () => {
  const cases: [string, number | undefined][] = [
    ['Wed, 21 Oct 2015 07:28:10 GMT', 10_000], // ten seconds after the wall clock
    ['Wednesday, 21-Oct-15 07:28:10 GMT', 10_000], // RFC 850 (obsolete)
    ['Wed Oct 21 07:28:10 2015', 10_000], // asctime (obsolete)
    ['Wed, 21 Oct 2015 07:28:00 GMT', undefined], // now: no hint (the backoff applies, with its jitter)
    ['Wed, 21 Oct 2015 07:27:00 GMT', undefined], // a date in the past: no hint
    ['Thu, 01 Jan 1970 00:00:00 GMT', undefined],
    ['Wed, 21 Oct 2015 07:28:01 GMT', 1000],
    ['Wed, 21 Oct 2015 08:28:00 GMT', 3_600_000],
    ['Thu, 22 Oct 2015 07:28:00 GMT', 86_400_000],
    ['Wed, 21 Oct 2015 07:28:10 UTC', undefined], // RFC 9110 requires "GMT"
    ['wed, 21 oct 2015 07:28:10 GMT', undefined], // names are case-sensitive
    ['Wed, 21 Oct 2015 7:28:10 GMT', undefined],
    ['Wed,  21 Oct 2015 07:28:10 GMT', undefined],
    ['Wed, 31 Apr 2015 07:28:10 GMT', undefined], // no 31 April
    ['Wed, 29 Feb 2015 07:28:10 GMT', undefined], // 2015 is not a leap year
    ['Wed, 21 Oct 2015 24:00:00 GMT', undefined],
    ['Wed, 21 Oct 2015 07:60:00 GMT', undefined],
    ['2015-10-21T07:28:10Z', undefined], // ISO 8601 is not an HTTP-date
    ['Oct 21 2015', undefined],
    ['Wed, 21 Oct 2015', undefined],
  ];
  it.each(cases)('%j → %s', (value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });

  it('asctime with a one-digit day (two spaces) parses; a date in the past is no hint', () => {
    expect(parseHttpDate('Thu Oct  1 07:28:10 2015')).toBe(Date.UTC(2015, 9, 1, 7, 28, 10));
    expect(parseRetryAfter('Thu Oct  1 07:28:10 2015', NOW)).toBeUndefined();
  });

  it('a wall clock with fractions of a ms: the wait is whole ms, rounded up, and never ends before the date', () => {
    const date = 'Wed, 21 Oct 2015 07:28:10 GMT';
    const at = Date.UTC(2015, 9, 21, 7, 28, 10);
    for (const nowMs of [NOW + 0.25, NOW + 0.999, NOW + 9_999.5, at - 0.001]) {
      const wait = parseRetryAfter(date, nowMs)!;
      expect(Number.isInteger(wait), String(nowMs)).toBe(true);
      expect(nowMs + wait).toBeGreaterThanOrEqual(at);
      expect(nowMs + wait - 1).toBeLessThan(at); // the least whole wait that gets there
    }
    expect(parseRetryAfter(date, NOW + 0.25)).toBe(10_000);
    expect(parseRetryAfter(date, at - 0.001)).toBe(1);
  });

  it('leap day and leap second', () => {
    expect(parseHttpDate('Mon, 29 Feb 2016 00:00:00 GMT')).toBe(Date.UTC(2016, 1, 29));
    expect(parseHttpDate('Sat, 29 Feb 2000 00:00:00 GMT')).toBe(Date.UTC(2000, 1, 29));
    expect(parseHttpDate('Thu, 29 Feb 1900 00:00:00 GMT')).toBeUndefined();
    expect(parseHttpDate('Wed, 31 Dec 2016 23:59:60 GMT')).toBe(Date.UTC(2017, 0, 1));
  });

  it('RFC 850 two-digit years: within 50 years of now (RFC 9110 §5.6.7)', () => {
    const at2015 = NOW;
    expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', at2015)).toBe(Date.UTC(1994, 10, 6, 8, 49, 37));
    expect(parseHttpDate('Sunday, 06-Nov-65 08:49:37 GMT', at2015)).toBe(Date.UTC(2065, 10, 6, 8, 49, 37)); // 50 years ahead: kept
    expect(parseHttpDate('Sunday, 06-Nov-66 08:49:37 GMT', at2015)).toBe(Date.UTC(1966, 10, 6, 8, 49, 37)); // 51 ahead: last century
    const at2099 = Date.UTC(2099, 5, 1);
    expect(parseHttpDate('Monday, 01-Jan-01 00:00:00 GMT', at2099)).toBe(Date.UTC(2101, 0, 1)); // 2 years ahead, not 98 back
  });

  it('never calls Date.parse (which reads "120" as the year 120)', () => {
    const spy = vi.spyOn(Date, 'parse');
    for (const v of ['120', '1.5', 'soon', 'Wed, 21 Oct 2015 07:28:10 GMT', '2015-10-21']) parseRetryAfter(v, NOW);
    expect(spy).not.toHaveBeenCalled();
  });

  it('property: IMF-fixdate as the platform writes it (toUTCString) parses back to the same second', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Date.UTC(9999, 11, 31, 23, 59, 59) }), (ms) => {
        expect(parseHttpDate(new Date(ms).toUTCString())).toBe(Math.floor(ms / 1000) * 1000);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: any string → undefined or a finite wait ≥ 0, never a throw', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.integer({ min: 0, max: 4e12 }), (value, now) => {
        const ms = parseRetryAfter(value, now);
        if (ms !== undefined) expect(Number.isFinite(ms) && ms >= 0).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: a date d seconds after now (any of the three forms) → d × 1000 ms', () => {
    const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
    const longDays = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
    const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    const p2 = (n: number): string => String(n).padStart(2, '0');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 * 365 * 86_400 }), fc.integer({ min: 0, max: 2 }), (d, form) => {
        const t = new Date(NOW + d * 1000);
        const time = `${p2(t.getUTCHours())}:${p2(t.getUTCMinutes())}:${p2(t.getUTCSeconds())}`;
        const text =
          form === 0
            ? `${days[t.getUTCDay()]}, ${p2(t.getUTCDate())} ${months[t.getUTCMonth()]} ${t.getUTCFullYear()} ${time} GMT`
            : form === 1
              ? `${longDays[t.getUTCDay()]}, ${p2(t.getUTCDate())}-${months[t.getUTCMonth()]}-${p2(t.getUTCFullYear() % 100)} ${time} GMT`
              : `${days[t.getUTCDay()]} ${months[t.getUTCMonth()]} ${String(t.getUTCDate()).padStart(2, ' ')} ${time} ${t.getUTCFullYear()}`;
        expect(parseRetryAfter(text, NOW)).toBe(d === 0 ? undefined : d * 1000);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('parseRetryAfter: a missing or broken nowMs is an error, not a silently ignored date', () => {
  it.each([undefined, Number.NaN, Infinity, -Infinity, '1700000000000'])('nowMs %s: InvalidOptionError naming nowMs', (nowMs) => {
    expect(() => parseRetryAfter('Wed, 21 Oct 2099 07:28:00 GMT', nowMs as number)).toThrow(
      /^parseRetryAfter: nowMs must be a finite number of ms since the epoch, such as Date\.now\(\), got /,
    );
    // Also for delay-seconds: the bug is the caller's whatever the server sent.
    expect(() => parseRetryAfter('5', nowMs as number)).toThrow(InvalidOptionError);
  });
  it('no header at all needs no clock', () => {
    expect(parseRetryAfter(null, Number.NaN)).toBeUndefined();
  });
});

describe('retryAfterFromHeaders: an HTTP-date is measured from the response\'s own Date', () => {
  const T = 'Wed, 21 Oct 2015 07:28:00 GMT';
  const T5 = 'Wed, 21 Oct 2015 07:28:05 GMT';
  it.each([
    ['client clock 10 s fast', NOW + 10_000, { date: T, 'retry-after': T5 }, 5000],
    ['client clock 1 h slow', NOW - 3_600_000, { date: T, 'retry-after': T5 }, 5000],
    ['no Date header: the local clock', NOW, { 'retry-after': T5 }, 5000],
    ['no Date header, client 10 s fast: the date has passed, no hint', NOW + 10_000, { 'retry-after': T5 }, undefined],
    ['an invalid Date header: the local clock', NOW, { date: 'yesterday', 'retry-after': T5 }, 5000],
    ['Retry-After equal to Date: no hint', NOW - 60_000, { date: T, 'retry-after': T }, undefined],
    ['Retry-After before Date: no hint', NOW, { date: T5, 'retry-after': T }, undefined],
    ['delay-seconds do not read Date', NOW, { date: 'Thu, 01 Jan 1970 00:00:00 GMT', 'retry-after': '2' }, 2000],
  ] as [string, number, Record<string, string>, number | undefined][])('%s', (_name, now, headers, expected) => {
    expect(retryAfterFromHeaders(new Headers(headers), now)).toBe(expected);
  });
});

describe('retry-after-ms and precedence', () => {
  it.each([
    ['1500', 1500],
    ['250.5', 250.5],
    ['0', 0],
    ['-1', undefined],
    ['1e3', undefined],
    ['', undefined],
    ['.5', undefined],
  ] as [string, number | undefined][])('retry-after-ms %j → %s', (value, expected) => {
    expect(parseRetryAfterMs(value)).toBe(expected);
  });

  it('a valid retry-after-ms wins over Retry-After; an invalid one falls back to it', () => {
    expect(retryAfterFromHeaders(new Headers({ 'retry-after-ms': '1500', 'retry-after': '5' }), NOW)).toBe(1500);
    expect(retryAfterFromHeaders(new Headers({ 'retry-after-ms': 'x', 'retry-after': '5' }), NOW)).toBe(5000);
    expect(retryAfterFromHeaders(new Headers({ 'retry-after': 'soon' }), NOW)).toBeUndefined();
    expect(retryAfterFromHeaders(new Headers(), NOW)).toBeUndefined();
  });
});
