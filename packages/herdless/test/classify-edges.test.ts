import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CircuitOpenError, isDoNotRetry, isGivenUp, isTransientError, markDoNotRetry, serverHint } from 'herdless';
import { DO_NOT_RETRY, classify } from 'herdless/core';
import { CIRCUIT_OPEN_VERDICT, FATAL, RETRYABLE, RETRYABLE_THROTTLED, RETRYABLE_TIMEOUT } from 'herdless/sim';
import { isNotFatal } from '../src/core/classify/classify.js';

// The edges of the classification that classify.test.ts does not reach: odd members and holes in
// the places a failure is read from (null, undefined, primitives, functions), the depth of the
// cause chain, a TypeError from another realm, and the wording and shape of the "do not retry" mark.

const coded = (code: string): Error => Object.assign(new Error(code), { code });
const always = (): boolean => true;

describe('isTransientError: where codes and statuses are read', () => {
  it("an AggregateError's members: holes and primitives are skipped, an object without a code does not count", () => {
    const aggregate = (errors: unknown[]): AggregateError => new AggregateError(errors);
    expect(isTransientError(aggregate([undefined, null, 'ECONNRESET', 42, coded('ECONNRESET')]))).toBe(true);
    expect(isTransientError(aggregate([undefined, null, 'ECONNRESET']))).toBe(false);
    expect(isTransientError(aggregate([{}, coded('ENOTFOUND')]))).toBe(false);
  });

  it('a response of null, or one with another status, is not transient', () => {
    expect(isTransientError(Object.assign(new Error(), { status: 404, response: null }))).toBe(false);
    expect(isTransientError(Object.assign(new Error(), { response: { status: 404, statusCode: 409 } }))).toBe(false);
    expect(isTransientError(Object.assign(new Error(), { response: { status: 404, statusCode: 503 } }))).toBe(true);
  });

  it('gRPC code 14 counts on an error with `details` alone, or `metadata` alone', () => {
    expect(isTransientError(Object.assign(new Error('14 UNAVAILABLE'), { code: 14, details: 'x' }))).toBe(true);
    expect(isTransientError(Object.assign(new Error('14 UNAVAILABLE'), { code: 14, metadata: {} }))).toBe(true);
  });

  it("fetch()'s TypeError: the cause chain is read three levels deep, no further", () => {
    const chain = (levels: number): unknown => {
      let e: unknown = coded('ECONNRESET');
      for (let i = 1; i < levels; i++) e = new Error(`wrap ${i}`, { cause: e });
      return e;
    };
    expect(isTransientError(new TypeError('fetch failed', { cause: chain(3) }))).toBe(true);
    expect(isTransientError(new TypeError('fetch failed', { cause: chain(4) }))).toBe(false);
    expect(isTransientError(new TypeError('fetch failed', { cause: null }))).toBe(false);
    expect(isTransientError(new TypeError('fetch failed', { cause: new Error('wrap', { cause: null }) }))).toBe(false);
  });

  it('a TypeError from another realm (node:vm) is a TypeError too: a bug unless it wraps a network failure', () => {
    const foreign = runInNewContext('new TypeError("x is not a function")') as Error;
    expect(foreign instanceof TypeError).toBe(false);
    expect(isTransientError(Object.assign(foreign, { status: 503 }))).toBe(false);
    const fetchFailed = runInNewContext('(cause) => new TypeError("fetch failed", { cause })')(coded('ECONNRESET')) as Error;
    expect(isTransientError(fetchFailed)).toBe(true);
  });

  it('a TypeError subclass under another name is still a TypeError', () => {
    class ParseTypeError extends TypeError {
      override name = 'ParseTypeError';
    }
    expect(isTransientError(Object.assign(new ParseTypeError('bad'), { status: 503 }))).toBe(false);
  });
});

describe('classify(): a failure that the override calls retryable, whatever its shape', () => {
  it('null, undefined, a string and a number are plainly retryable: no timeout, no throttling', () => {
    for (const failure of [null, undefined, 'ETIMEDOUT', 429]) expect(classify(failure, always)).toBe(RETRYABLE);
  });

  it('a cause or a response of null is read as none', () => {
    expect(classify(Object.assign(coded('ECONNRESET'), { cause: null }))).toBe(RETRYABLE);
    expect(classify(Object.assign(new Error(), { status: 503, response: null }))).toBe(RETRYABLE);
  });

  it('throttling: statusCode 429 on the response', () => {
    expect(classify(Object.assign(new Error(), { response: { statusCode: 429 } }))).toBe(RETRYABLE_THROTTLED);
    expect(classify(Object.assign(new Error(), { response: { status: 503, statusCode: 502 } }))).toBe(RETRYABLE);
  });

  it('a timeout code on the cause marks the timeout', () => {
    expect(classify(Object.assign(new Error('x', { cause: coded('ETIMEDOUT') }), { status: 503 }))).toBe(RETRYABLE_TIMEOUT);
  });
});

describe('the circuit breaker refusal', () => {
  it('is not fatal even when its "do not retry" mark was taken off', () => {
    const e = new CircuitOpenError('open', 100);
    expect(Reflect.deleteProperty(e, DO_NOT_RETRY)).toBe(true);
    expect(isDoNotRetry(e)).toBe(false);
    expect(classify(e)).toBe(CIRCUIT_OPEN_VERDICT);
    expect(isNotFatal(e)).toBe(true);
  });
});

describe('the "do not retry" mark', () => {
  it('refuses a primitive or null with a sentence naming the value', () => {
    expect(() => markDoNotRetry('x' as never)).toThrow(new TypeError('markDoNotRetry: error must be an object, got x'));
    expect(() => markDoNotRetry(null as never)).toThrow(new TypeError('markDoNotRetry: error must be an object, got null'));
    expect(() => markDoNotRetry(undefined as never)).toThrow(new TypeError('markDoNotRetry: error must be an object, got undefined'));
  });

  it('is removable (configurable): a caller can take it off again', () => {
    const e = markDoNotRetry(new Error('overloaded'));
    expect(Reflect.deleteProperty(e, DO_NOT_RETRY)).toBe(true);
    expect(isDoNotRetry(e)).toBe(false);
    expect(serverHint(e)).toBe(undefined);
  });

  it('a function can carry it, and every reader sees it there', () => {
    const thrown = markDoNotRetry(() => 'a thrown function');
    expect(isDoNotRetry(thrown)).toBe(true);
    expect(isGivenUp(thrown)).toBe(true);
    expect(serverHint(thrown)).toBe('do-not-retry');
    expect(classify(thrown, always)).toEqual({ kind: 'do-not-retry' });
    expect(isGivenUp(Object.assign(() => 0, { response: markDoNotRetry(new Error('gave up')) }))).toBe(true);
  });

  it('serverHint reads a function\'s retryAfterMs, and nothing from null, undefined or a primitive', () => {
    expect(serverHint(Object.assign(() => 0, { retryAfterMs: 250 }))).toBe(250);
    for (const value of [null, undefined, 42, 'text', true]) expect(serverHint(value)).toBe(undefined);
    expect(classify(null, always)).not.toBe(FATAL);
  });
});
