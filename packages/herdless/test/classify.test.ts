import { describe, expect, it } from 'vitest';
import { AttemptTimeoutError, CircuitOpenError, RetryError, isDoNotRetry, isTransientError, markDoNotRetry, serverHint } from 'herdless';
import { RETRYABLE_ERROR_CODES, RETRYABLE_HTTP_STATUSES, classify } from 'herdless/core';
import { DO_NOT_RETRY_VERDICT, FATAL, RETRYABLE } from 'herdless/sim';
import { isNotFatal } from '../src/core/classify/classify.js';

const coded = (code: string): Error => Object.assign(new Error(code), { code });
const withStatus = (status: number): Error => Object.assign(new Error(`HTTP ${status}`), { status });
const fetchFailed = (cause: unknown): TypeError => new TypeError('fetch failed', { cause });

describe('isTransientError: the default classification as data', () => {
  const cases: [string, unknown, boolean][] = [
    ['ECONNRESET', coded('ECONNRESET'), true],
    ['ECONNREFUSED', coded('ECONNREFUSED'), true],
    ['ETIMEDOUT', coded('ETIMEDOUT'), true],
    ['EPIPE', coded('EPIPE'), true],
    ['EAI_AGAIN', coded('EAI_AGAIN'), true],
    ['UND_ERR_SOCKET', coded('UND_ERR_SOCKET'), true],
    ['ENOTFOUND (a bad name, not a blip)', coded('ENOTFOUND'), false],
    ['EACCES', coded('EACCES'), false],
    ['fetch failed ← ECONNREFUSED', fetchFailed(coded('ECONNREFUSED')), true],
    ['fetch failed ← UND_ERR_SOCKET', fetchFailed(coded('UND_ERR_SOCKET')), true],
    ['fetch failed ← AggregateError[ECONNREFUSED]', fetchFailed(new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')])), true],
    ['fetch failed ← wrapper ← ECONNRESET', fetchFailed(new Error('wrap', { cause: coded('ECONNRESET') })), true],
    ['fetch failed without a cause', new TypeError('fetch failed'), false],
    ['fetch failed ← ENOTFOUND', fetchFailed(coded('ENOTFOUND')), false],
    ['TypeError x is not a function', new TypeError('x is not a function'), false],
    ['TypeError carrying status 503 (a bug is a bug)', Object.assign(new TypeError('oops'), { status: 503 }), false],
    ...RETRYABLE_HTTP_STATUSES.map((s): [string, unknown, boolean] => [`status ${s}`, withStatus(s), true]),
    ['statusCode 503', Object.assign(new Error(), { statusCode: 503 }), true],
    ['response.status 429', Object.assign(new Error(), { response: { status: 429 } }), true],
    ['response.statusCode 502', Object.assign(new Error(), { response: { statusCode: 502 } }), true],
    ['status 400', withStatus(400), false],
    ['status 404', withStatus(404), false],
    ['status 409', withStatus(409), false],
    ['status 501', withStatus(501), false],
    ['status "503" (a string)', Object.assign(new Error(), { status: '503' }), false],
    ['gRPC UNAVAILABLE (grpc-js shape)', Object.assign(new Error('14 UNAVAILABLE'), { code: 14, details: 'x', metadata: {} }), true],
    ['gRPC UNAVAILABLE (ConnectError)', Object.assign(new Error('unavailable'), { name: 'ConnectError', code: 14 }), true],
    ['gRPC code string UNAVAILABLE', coded('UNAVAILABLE'), true],
    ['code 14 without gRPC shape', Object.assign(new Error('TypeMismatch'), { code: 14 }), false],
    ['gRPC INVALID_ARGUMENT', Object.assign(new Error('3 INVALID_ARGUMENT'), { code: 3, details: 'x', metadata: {} }), false],
    ['attempt timeout', new AttemptTimeoutError(1, 100, false), true],
    ['AbortError', new DOMException('aborted', 'AbortError'), false],
    ['plain Error', new Error('boom'), false],
    ['a string', 'ECONNRESET', false],
    ['undefined', undefined, false],
    ['null', null, false],
  ];
  it.each(cases)('%s → %s', (_name, error, expected) => {
    expect(isTransientError(error)).toBe(expected);
  });

  it('the data lists are frozen', () => {
    expect(Object.isFrozen(RETRYABLE_ERROR_CODES)).toBe(true);
    expect(Object.isFrozen(RETRYABLE_HTTP_STATUSES)).toBe(true);
    expect(RETRYABLE_HTTP_STATUSES).toEqual([408, 429, 500, 502, 503, 504]);
  });
});

describe('server hints', () => {
  it.each([
    { error: Object.assign(new Error(), { retryAfterMs: 2000 }), hint: 2000 },
    { error: Object.assign(new Error(), { retryAfterMs: 0 }), hint: 0 },
    { error: Object.assign(new Error(), { retryAfterMs: -1 }), hint: 'do-not-retry' },
    { error: Object.assign(new Error(), { retryAfterMs: Number.NaN }), hint: 'do-not-retry' },
    { error: Object.assign(new Error(), { retryAfterMs: Infinity }), hint: 'do-not-retry' },
    { error: Object.assign(new Error(), { retryAfterMs: '5' }), hint: 'do-not-retry' },
    { error: new Error(), hint: undefined },
    { error: 'text', hint: undefined },
    { error: markDoNotRetry(new Error()), hint: 'do-not-retry' },
  ])('serverHint → $hint', ({ error, hint }) => {
    expect(serverHint(error)).toBe(hint);
  });

  it('markDoNotRetry marks without changing message, enumerable keys or JSON', () => {
    const e = Object.assign(new Error('overloaded'), { status: 503 });
    expect(isDoNotRetry(e)).toBe(false);
    expect(markDoNotRetry(e)).toBe(e);
    expect(isDoNotRetry(e)).toBe(true);
    expect(Object.keys(e)).toEqual(['status']);
    expect(JSON.stringify(e)).toBe('{"status":503}');
    expect(() => markDoNotRetry('x' as never)).toThrow(TypeError);
  });

  it('the mark is a Symbol.for key: an error marked by another copy of herdless counts', () => {
    const foreign = new Error('from another copy');
    Object.defineProperty(foreign, Symbol.for('herdless.doNotRetry'), { value: true });
    expect(isDoNotRetry(foreign)).toBe(true);
  });

  it('every RetryError says do-not-retry', () => {
    expect(isDoNotRetry(new RetryError('exhausted', 3, new Error('x')))).toBe(true);
  });
});

describe('classify(): mark, then decision (override), then hint', () => {
  it('defaults', () => {
    expect(classify(withStatus(503))).toBe(RETRYABLE);
    expect(classify(withStatus(404))).toBe(FATAL);
    expect(classify(Object.assign(withStatus(429), { retryAfterMs: 1500 }))).toEqual({ kind: 'retryable', retryAfterMs: 1500 });
    expect(classify(Object.assign(withStatus(503), { retryAfterMs: -1 }))).toBe(DO_NOT_RETRY_VERDICT);
    expect(classify(markDoNotRetry(withStatus(503)))).toBe(DO_NOT_RETRY_VERDICT);
  });

  it('timeouts are marked for budgets that charge them more', () => {
    expect(classify(new AttemptTimeoutError(2, 100, false))).toEqual({ kind: 'retryable', timeout: true });
    expect(classify(coded('ETIMEDOUT'))).toEqual({ kind: 'retryable', timeout: true });
    expect(classify(fetchFailed(coded('UND_ERR_CONNECT_TIMEOUT')))).toEqual({ kind: 'retryable', timeout: true });
    expect(classify(coded('ECONNRESET'))).toBe(RETRYABLE);
  });

  it('a hint never makes a fatal error retryable', () => {
    expect(classify(Object.assign(withStatus(404), { retryAfterMs: 100 }))).toBe(FATAL);
    expect(classify(Object.assign(withStatus(404), { retryAfterMs: -1 }))).toBe(FATAL);
  });

  it('the override extends (undefined keeps the default) or replaces the decision', () => {
    const seen: unknown[] = [];
    const extend = (e: unknown, info: { attempt: number; transient: boolean }) => {
      seen.push(info);
      return (e as { status?: number }).status === 409 ? true : undefined;
    };
    expect(classify(withStatus(409), extend, 2)).toBe(RETRYABLE);
    expect(classify(withStatus(503), extend, 3)).toBe(RETRYABLE);
    expect(classify(withStatus(404), extend, 4)).toBe(FATAL);
    expect(seen).toEqual([
      { attempt: 2, transient: false },
      { attempt: 3, transient: true },
      { attempt: 4, transient: false },
    ]);
    expect(classify(withStatus(503), () => false)).toBe(FATAL);
    expect(classify(new Error('mine'), () => true)).toBe(RETRYABLE);
  });

  it('the override cannot overrule the do-not-retry mark', () => {
    expect(classify(new RetryError('exhausted', 3, withStatus(503)), () => true)).toBe(DO_NOT_RETRY_VERDICT);
  });
});

describe('isNotFatal: classify() without an override, fatal or not (the breaker reads only this)', () => {
  it('agrees with classify() on every kind of failure', () => {
    const failures: unknown[] = [
      withStatus(503),
      withStatus(404),
      withStatus(429),
      Object.assign(withStatus(429), { retryAfterMs: 1500 }),
      Object.assign(withStatus(503), { retryAfterMs: -1 }),
      Object.assign(withStatus(404), { retryAfterMs: 10 }),
      markDoNotRetry(withStatus(503)),
      markDoNotRetry(withStatus(404)),
      new RetryError('exhausted', 3, withStatus(503)),
      new AttemptTimeoutError(2, 100, false),
      coded('ETIMEDOUT'),
      coded('ECONNRESET'),
      coded('ENOENT'),
      fetchFailed(coded('UND_ERR_CONNECT_TIMEOUT')),
      new TypeError('x is not a function'),
      new CircuitOpenError('open', 5),
      Object.assign(new Error('grpc'), { code: 'UNAVAILABLE' }),
      Object.assign(new Error('grpc'), { code: 8, details: '' }),
      'a string',
      undefined,
      null,
      42,
    ];
    for (const failure of failures) expect(isNotFatal(failure), String(failure)).toBe(classify(failure).kind !== 'fatal');
  });
});
