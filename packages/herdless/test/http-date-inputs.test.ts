/** parseHttpDate checks what your code passes it, as parseRetryAfter does: a header's text, or nothing. */
import { describe, expect, it } from 'vitest';
import { parseHttpDate, parseRetryAfter } from 'herdless/http';
import { invalidOption } from './support/invalid-option.js';

describe('parseHttpDate: what the caller passes', () => {
  it.each([
    [120, 0, 'value', 120],
    [1445412490000, 0, 'value', 1445412490000],
    [{ toString: () => 'Wed, 21 Oct 2015 07:28:10 GMT' }, 0, 'value', undefined],
    [new Date(0), 0, 'value', undefined],
    ['Wed, 21 Oct 2015 07:28:10 GMT', Number.NaN, 'nowMs', Number.NaN],
    ['Wednesday, 21-Oct-15 07:28:10 GMT', Infinity, 'nowMs', Infinity],
    ['Wed, 21 Oct 2015 07:28:10 GMT', '0', 'nowMs', '0'],
  ])('parseHttpDate(%o, %o) → InvalidOptionError on %s', (value, nowMs, field, shown) => {
    const error = invalidOption(() => parseHttpDate(value as never, nowMs as never));
    expect(error.field).toBe(field);
    if (shown !== undefined) expect(error.value).toBe(shown);
    expect(error.message).toMatch(/^parseHttpDate: /);
  });

  it('an absent header (null, undefined) is no date, as in parseRetryAfter', () => {
    expect([parseHttpDate(null), parseHttpDate(undefined), parseRetryAfter(null, 0)]).toEqual([undefined, undefined, undefined]);
  });

  it('what a server sends is never an error: a malformed date is undefined', () => {
    expect(['120', '', 'soon', '2015-10-21T07:28:10Z'].map((v) => parseHttpDate(v, 0))).toEqual([undefined, undefined, undefined, undefined]);
    expect(parseHttpDate('Wed, 21 Oct 2015 07:28:10 GMT')).toBe(1445412490000);
  });
});
