/**
 * The HTTP adapters' options as they are read, one rule at a time and without a request: the
 * statuses' bounds and the field an error names, method names, refreshStatuses and its words, what
 * a request's own options keep of the adapter's, the names a misspelling error lists, and when the
 * attempt header stays off a browser's cross-origin request.
 */
import { describe, expect, it, vi } from 'vitest';
import { constantBackoff, systemScheduler } from 'herdless';
import { crossOriginInBrowser, retryAttemptHeader } from '../src/http/attempt-header.js';
import { parseCallOptions, parseHttpOptions, type HttpConfig } from '../src/http/options.js';
import { invalidOption } from './support/invalid-option.js';

const parse = (options: object, owner = 'withRetry'): HttpConfig => parseHttpOptions(options as never, owner, false);
const hook = (): undefined => undefined;

describe('retryStatuses and refreshStatuses', () => {
  it('100 and 599 are statuses; 99, 600 and 200.5 are not', () => {
    expect([...parse({ retryStatuses: [100, 599] }).statuses]).toEqual([100, 599]);
    for (const bad of [99, 600, 200.5]) {
      const error = invalidOption(() => parse({ retryStatuses: [bad] }));
      expect(error.message).toBe(`withRetry: retryStatuses must hold integer status codes in [100, 599], got ${bad}`);
    }
  });

  it('the default statuses, and an empty list that retries no status', () => {
    expect([...parse({}).statuses]).toEqual([408, 429, 500, 502, 503, 504]);
    expect(parse({ retryStatuses: [] }).statuses.size).toBe(0);
  });

  it('refreshStatuses: its errors name it, with their own words', () => {
    expect(invalidOption(() => parse({ refreshStatuses: 401, beforeAttempt: hook })).message).toBe('withRetry: refreshStatuses must be an array of status codes, got 401');
    expect(invalidOption(() => parse({ refreshStatuses: [600], beforeAttempt: hook })).message).toBe('withRetry: refreshStatuses must hold integer status codes in [100, 599], got 600');
    expect(invalidOption(() => parse({ refreshStatuses: [401, 503], beforeAttempt: hook })).message).toBe(
      'withRetry: refreshStatuses must not be in retryStatuses (a status is retried, or refreshed once, not both), got 503',
    );
    expect(invalidOption(() => parse({ refreshStatuses: [401] })).message).toBe(
      'withRetry: refreshStatuses needs beforeAttempt, which sets the new credentials (the same request would be refused again), got an array of length 1',
    );
  });

  it('refreshStatuses: a status the adapter does not retry may be refreshed; an empty list is none (and needs no beforeAttempt)', () => {
    expect([...parse({ refreshStatuses: [503], retryStatuses: [429], beforeAttempt: hook }).refreshStatuses!]).toEqual([503]);
    expect(parse({ refreshStatuses: [] }).refreshStatuses).toBeUndefined();
    expect(parse({}).refreshStatuses).toBeUndefined();
  });
});

describe('retryMethods', () => {
  it('names are upper-cased; a name with a space before or after is no token', () => {
    expect([...parse({ retryMethods: ['get', 'Purge'] }).methods]).toEqual(['GET', 'PURGE']);
    for (const bad of [' GET', 'GET ', 5]) {
      const error = invalidOption(() => parse({ retryMethods: [bad] }));
      expect(error.field).toBe('retryMethods');
      expect(error.value).toBe(bad);
    }
  });

  it('the default: GET, HEAD, OPTIONS, PUT, DELETE, TRACE', () => {
    expect([...parse({}).methods]).toEqual(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
  });
});

describe('the adapter’s other options', () => {
  it('idempotencyKey: false and undefined are none; true the generator; a function itself', () => {
    expect(parse({ idempotencyKey: false }).idempotencyKey).toBeUndefined();
    expect(parse({}).idempotencyKey).toBeUndefined();
    const own = (): string => '"k"';
    expect(parse({ idempotencyKey: own }).idempotencyKey).toBe(own);
    expect(parse({ idempotencyKey: true }).idempotencyKey!()).toMatch(/^"[0-9a-f-]{36}"$/);
  });

  it('the attempt header: named or not, off with false', () => {
    expect([parse({}).attemptHeader, parse({}).attemptHeaderNamed]).toEqual(['x-herdless-attempt', false]);
    expect([parse({ attemptHeader: 'X-Try' }).attemptHeader, parse({ attemptHeader: 'X-Try' }).attemptHeaderNamed]).toEqual(['x-try', true]);
    expect(parse({ attemptHeader: false }).attemptHeader).toBeUndefined();
  });

  it('the clock: the system scheduler by default; now: Date.now by default', () => {
    expect(parse({}).clock).toBe(systemScheduler);
    const before = Date.now();
    const now = parse({}).now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it('a policy option given as undefined is left out of what a request starts from', () => {
    const config = parse({ maxAttempts: undefined, deadlineMs: 5000 });
    expect(Object.keys(config.retryOptions)).toEqual(['deadlineMs']);
  });

  it('a misspelt option: the list names the adapter’s own keys too', () => {
    const error = invalidOption(() => parseHttpOptions({ adaptr: 1 } as never, 'retryAdapter', false, ['adapter']));
    expect(error.message).toMatch(/^retryAdapter: adaptr is not an option of retryAdapter \(did you mean adapter\? options: maxAttempts, /);
    expect(error.message).toContain(', adapter)');
  });

  it('withRetry’s list has no per-request option; fetchWithRetry’s has them', () => {
    const adapter = invalidOption(() => parse({ x: 1 })).message;
    expect(adapter).not.toContain('bodyFactory');
    expect(adapter).toContain('retryMethods, retryStatuses, idempotencyKey, now, attemptHeader, breaker, beforeAttempt, refreshStatuses');
    const whole = invalidOption(() => parseHttpOptions({ x: 1 } as never, 'fetchWithRetry', true)).message;
    expect(whole).toContain('bodyFactory');
    // Each name once, though idempotencyKey and beforeAttempt are both adapter and request options.
    expect(whole.split('beforeAttempt').length).toBe(2);
  });

  it('options that are not an object: an array, null', () => {
    expect(invalidOption(() => parse([] as never)).message).toBe('withRetry: options must be an object, got an array of length 0');
    expect(invalidOption(() => parseHttpOptions(null as never, 'withRetry', false)).message).toBe('withRetry: options must be an object, got null');
  });
});

describe('a request’s own options', () => {
  const base = parse({ maxAttempts: 3, backoff: constantBackoff({ delayMs: 7 }), deadlineMs: 9000, idempotencyKey: true });

  it('none given: the adapter’s config itself', () => {
    expect(parseCallOptions(base, undefined, 'withRetry', 'options', true)).toEqual({ config: base, idempotencyKey: undefined, bodyFactory: undefined });
    expect(parseCallOptions(base, {}, 'withRetry', 'options', true).config).toBe(base);
    expect(parseCallOptions(base, { idempotencyKey: false }, 'withRetry', 'options', true).config).toBe(base);
  });

  it('a policy option: read over the adapter’s policy, the rest kept', () => {
    const call = parseCallOptions(base, { maxAttempts: 5 }, 'withRetry', 'options', true);
    expect(call.config).not.toBe(base);
    expect(call.config.retryOptions).toEqual({ ...base.retryOptions, maxAttempts: 5 });
    expect(call.config.settings.maxAttempts).toBe(5);
    expect(call.config.settings.deadlineMs).toBe(9000);
    expect(call.config.methods).toBe(base.methods);
    expect(base.settings.maxAttempts).toBe(3);
    expect(base.retryOptions).not.toHaveProperty('maxAttempts', 5);
  });

  it('only beforeAttempt: the adapter’s policy as read, the request’s hook', () => {
    const own = (): undefined => undefined;
    const call = parseCallOptions(base, { beforeAttempt: own }, 'withRetry', 'options', true);
    expect(call.config.beforeAttempt).toBe(own);
    expect(call.config.settings).toBe(base.settings);
    expect(call.config.retryOptions).toBe(base.retryOptions);
    // A policy option without a hook keeps the adapter's hook.
    const withHook = parse({ beforeAttempt: own });
    expect(parseCallOptions(withHook, { maxAttempts: 2 }, 'withRetry', 'options', true).config.beforeAttempt).toBe(own);
  });

  it('an option given as undefined is no option (even one the request may not set)', () => {
    expect(parseCallOptions(base, { budget: undefined, maxAttempts: undefined } as never, 'withRetry', 'options', true).config).toBe(base);
  });

  it('idempotencyKey and bodyFactory as given', () => {
    const factory = (): string => 'x';
    const call = parseCallOptions(base, { idempotencyKey: false, bodyFactory: factory }, 'withRetry', 'options', true);
    expect([call.idempotencyKey, call.bodyFactory]).toEqual([false, factory]);
    expect(parseCallOptions(base, { maxAttempts: 2 }, 'withRetry', 'options', true).idempotencyKey).toBeUndefined();
  });

  it('a client without bodyFactory lists only the request options; the field is the client’s', () => {
    expect(invalidOption(() => parseCallOptions(base, { bodyFactory: () => 'x' }, 'retryInterceptor', 'retryOptions', false)).message).toBe(
      'retryInterceptor: bodyFactory is not a per-request option (maxAttempts, backoff, maxRetryAfterMs, deadlineMs, attemptTimeoutMs, ignoreHints, idempotencyKey, beforeAttempt), got a function',
    );
    expect(invalidOption(() => parseCallOptions(base, 'x' as never, 'retryInterceptor', 'retryOptions', false)).message).toBe('retryInterceptor: retryOptions must be an object, got "x"');
    expect(invalidOption(() => parseCallOptions(base, [] as never, 'retryAdapter', 'herdless', false)).message).toBe('retryAdapter: herdless must be an object, got an array of length 0');
    expect(invalidOption(() => parseCallOptions(base, null as never, 'retryAdapter', 'herdless', false)).message).toBe('retryAdapter: herdless must be an object, got null');
  });
});

describe('the attempt header in a browser (cross-origin rules, without a browser)', () => {
  const named = { attemptHeader: 'x-try', attemptHeaderNamed: true };
  const byDefault = { attemptHeader: 'x-herdless-attempt', attemptHeaderNamed: false };

  it('crossOriginInBrowser: never outside a browser; by origin in one; always for an opaque origin or an unparsable URL', () => {
    expect(crossOriginInBrowser('http://b.example/x', undefined)).toBe(false);
    expect(crossOriginInBrowser('http://a.example/x', 'http://a.example')).toBe(false);
    expect(crossOriginInBrowser('/relative', 'http://a.example')).toBe(false);
    expect(crossOriginInBrowser('http://b.example/x', 'http://a.example')).toBe(true);
    expect(crossOriginInBrowser('http://a.example/x', 'null')).toBe(true);
    expect(crossOriginInBrowser('http://[', 'http://a.example')).toBe(true);
  });

  it('retryAttemptHeader: the default header stays off cross-origin requests; a named one, or none outside a browser, does not', () => {
    expect(retryAttemptHeader(byDefault, () => 'http://b.example/x', 'http://a.example')).toBeUndefined();
    expect(retryAttemptHeader(byDefault, () => 'http://a.example/x', 'http://a.example')).toBe('x-herdless-attempt');
    expect(retryAttemptHeader(named, () => 'http://b.example/x', 'http://a.example')).toBe('x-try');
    expect(retryAttemptHeader(byDefault, () => 'http://b.example/x', undefined)).toBe('x-herdless-attempt');
    expect(retryAttemptHeader({ attemptHeader: undefined, attemptHeaderNamed: false }, () => 'http://b.example/x', 'http://a.example')).toBeUndefined();
  });

  it('the origin is read from location.origin, and only when it is a string', () => {
    vi.stubGlobal('location', { origin: 'http://a.example' });
    try {
      expect(retryAttemptHeader(byDefault, () => 'http://b.example/x')).toBeUndefined();
      vi.stubGlobal('location', { origin: 42 });
      expect(retryAttemptHeader(byDefault, () => 'http://b.example/x')).toBe('x-herdless-attempt');
    } finally {
      vi.unstubAllGlobals();
    }
    expect(retryAttemptHeader(byDefault, () => 'http://b.example/x')).toBe('x-herdless-attempt');
  });
});
