import { describe, expect, it } from 'vitest';
import { parseRetryAfter, parseRetryAfterMs, retryAfterFromHeaders } from 'herdless/http';
import { invalidOption } from './support/invalid-option.js';

// What the hint parsers take from their caller (not from a server): a header's value is text, or
// absent (null, as Headers.get returns, or undefined); a header reader has get(name). Anything else is
// the caller's mistake and is refused by name, never read as "no hint" (a plain object of headers
// used to throw a bare TypeError, and the number 120 was silently no hint).
const NOW = Date.UTC(2015, 9, 21, 7, 28, 0);
const TEXT = "must be the header's text (a string), or null or undefined when the header is absent";

describe('a header value is text, or absent', () => {
  it('null and undefined are an absent header: no hint, from both parsers', () => {
    expect(parseRetryAfter(null, NOW)).toBeUndefined();
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
    expect(parseRetryAfterMs(null)).toBeUndefined();
    expect(parseRetryAfterMs(undefined)).toBeUndefined();
  });

  it.each([
    [120, 'got 120'],
    [['5'], 'got an array of length 1'],
    [false, 'got false'],
    [{ value: '5' }, 'got an object (Object)'],
  ])('%j is refused by parseRetryAfter and parseRetryAfterMs, naming the value', (value, got) => {
    const a = invalidOption(() => parseRetryAfter(value as never, NOW));
    expect(a.message).toBe(`parseRetryAfter: value ${TEXT}, ${got}`);
    expect(a.field).toBe('value');
    expect(a.value).toBe(value);
    const b = invalidOption(() => parseRetryAfterMs(value as never));
    expect(b.message).toBe(`parseRetryAfterMs: value ${TEXT}, ${got}`);
  });

  it('a value refused is refused before "now" is looked at', () => {
    expect(invalidOption(() => parseRetryAfter(5 as never, Number.NaN)).field).toBe('value');
  });
});

describe('retryAfterFromHeaders takes a reader with get(name)', () => {
  const REQUIREMENT = 'must be a Headers, or any object with its get(name) method (a plain object of values: new Headers(object))';

  it.each([
    [{ 'retry-after': '3' }, 'a plain object of values'],
    [null, 'null'],
    [undefined, 'undefined'],
    [42, 'a number'],
    [{ get: 'retry-after' }, 'a get that is not a function'],
  ])('%j (%s) is refused, naming headers', (headers) => {
    const error = invalidOption(() => retryAfterFromHeaders(headers as never, NOW));
    expect(error.field).toBe('headers');
    expect(error.requirement).toBe(REQUIREMENT);
    expect(error.message.startsWith(`retryAfterFromHeaders: headers ${REQUIREMENT}, got `)).toBe(true);
  });

  it('a Headers, a plain object wrapped in one, and any object or function with get(name) are read', () => {
    expect(retryAfterFromHeaders(new Headers({ 'retry-after': '3' }), NOW)).toBe(3000);
    const values: Record<string, string> = { 'retry-after': '4' };
    const reader = { get: (name: string) => values[name] ?? null };
    expect(retryAfterFromHeaders(reader, NOW)).toBe(4000);
    const callable = Object.assign(() => undefined, reader);
    expect(retryAfterFromHeaders(callable, NOW)).toBe(4000);
  });
});
