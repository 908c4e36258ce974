import { describe, expect, it } from 'vitest';
import { type Rng } from 'herdless';
import { GRPC_STATUS_CODES, grpcDurationMs, grpcStatusName, grpcServerName, grpcStatusOf, grpcThrottleFor, grpcThrottleOf, parseGrpcPushback, parseGrpcServiceConfig } from 'herdless/grpc';
import { invalidOption } from './support/invalid-option.js';

const fixed = (x: number): Rng => ({ random: () => x });

/** gRFC A6's example retryPolicy, quoted by the article. */
const A6_POLICY = {
  maxAttempts: 4,
  initialBackoff: '0.1s',
  maxBackoff: '1s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};
const A6_CONFIG = {
  methodConfig: [{ name: [{ service: 'helloworld.Greeter' }], retryPolicy: A6_POLICY }],
  retryThrottling: { maxTokens: 10, tokenRatio: 0.1 },
};


describe('status codes', () => {
  it('maps names (any case) and numbers 0–16 to canonical names', () => {
    expect(GRPC_STATUS_CODES.UNAVAILABLE).toBe(14);
    expect(grpcStatusName(14)).toBe('UNAVAILABLE');
    expect(grpcStatusName(0)).toBe('OK');
    expect(grpcStatusName(16)).toBe('UNAUTHENTICATED');
    expect(grpcStatusName('unavailable')).toBe('UNAVAILABLE');
    expect(grpcStatusName('resource_exhausted')).toBe('RESOURCE_EXHAUSTED');
    expect([17, -1, 1.5, 'ECONNRESET', 'toString', null].map(grpcStatusName)).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
  });

  it('reads error.grpcCode, else error.code', () => {
    expect(grpcStatusOf({ code: 14 })).toBe('UNAVAILABLE');
    expect(grpcStatusOf({ code: 'DEADLINE_EXCEEDED' })).toBe('DEADLINE_EXCEEDED');
    expect(grpcStatusOf({ code: 'ECONNRESET', grpcCode: 8 })).toBe('RESOURCE_EXHAUSTED');
    expect(grpcStatusOf(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBeUndefined();
    expect(grpcStatusOf('UNAVAILABLE')).toBeUndefined();
    expect(grpcStatusOf(undefined)).toBeUndefined();
  });
});

describe('durations', () => {
  it.each([
    ['0.1s', 100],
    ['1s', 1000],
    ['0.3s', 300],
    ['10.25s', 10_250],
    ['0.000001s', 0.001],
    ['2.000000001s', 2000.000001],
  ])('%s is %d ms', (text, ms) => {
    expect(grpcDurationMs(text)).toBe(ms);
  });
  it.each(['1', '1.s', '.5s', '-1s', '1e3s', '0.1234567891s', ' 1s', '1 s', '1S', 1])('rejects %j', (bad) => {
    expect(invalidOption(() => grpcDurationMs(bad, 'x.initialBackoff')).field).toBe('x.initialBackoff');
  });
});

describe('parseGrpcServiceConfig', () => {
  it('reads gRFC A6’s example into herdless options', () => {
    const c = parseGrpcServiceConfig(A6_CONFIG);
    const p = c.retryPolicy!;
    expect(p).toMatchObject({
      maxAttempts: 4,
      requestedMaxAttempts: 4,
      maxAttemptsCapped: false,
      initialBackoffMs: 100,
      maxBackoffMs: 1000,
      backoffMultiplier: 2,
      retryableStatusCodes: ['UNAVAILABLE'],
      path: 'methodConfig[0].retryPolicy',
    });
    expect(c.retryThrottling).toEqual({ maxTokens: 10, tokenRatio: 0.1 });
    expect(c.warnings).toEqual([]);
    // gRPC's ±20% around min(100 × 2^(n−1), 1000) ms
    expect(p.backoff.name).toBe('proportional jitter');
    expect(p.backoff.delay(1, 0, fixed(0))).toBeCloseTo(80, 9);
    expect(p.backoff.delay(3, 0, fixed(0.5))).toBeCloseTo(400, 9);
    expect(p.backoff.delay(9, 0, fixed(0.999999))).toBeCloseTo(1200, 3);
    // the spreadable part
    const o = c.retryOptions;
    expect(o.maxAttempts).toBe(4);
    expect(o.backoff).toBe(p.backoff);
    expect(o.retryable({ code: 14 })).toBe(true);
    expect(o.retryable({ code: 3 })).toBe(false);
    expect(o.retryable(new Error('no status'))).toBe(false);
    expect(o.budget!.name).toBe('retry throttling');
    expect(o.budget!.tokens).toBe(10);
    // createBudget makes a fresh throttle each time
    const b1 = c.createBudget!();
    b1.onFailure(0);
    expect(c.createBudget!().tokens).toBe(10);
    expect(b1).not.toBe(o.budget);
  });

  it('accepts JSON text, a bare retryPolicy and the { retryPolicy, retryThrottling } shorthand', () => {
    expect(parseGrpcServiceConfig(JSON.stringify(A6_CONFIG)).retryPolicy!.maxAttempts).toBe(4);
    const bare = parseGrpcServiceConfig(A6_POLICY);
    expect(bare.retryPolicy!.path).toBe('retryPolicy');
    expect(bare.retryThrottling).toBeUndefined();
    expect(bare.createBudget).toBeUndefined();
    expect('budget' in bare.retryOptions).toBe(false);
    const short = parseGrpcServiceConfig({ retryPolicy: A6_POLICY, retryThrottling: { maxTokens: 5, tokenRatio: 0.5 } });
    expect(short.retryPolicy!.initialBackoffMs).toBe(100);
    expect(short.retryThrottling).toEqual({ maxTokens: 5, tokenRatio: 0.5 });
  });

  it('caps maxAttempts at 5, visibly', () => {
    const c = parseGrpcServiceConfig({ ...A6_POLICY, maxAttempts: 7 });
    expect(c.retryPolicy).toMatchObject({ maxAttempts: 5, requestedMaxAttempts: 7, maxAttemptsCapped: true });
    expect(c.retryOptions.maxAttempts).toBe(5);
    expect(c.warnings).toEqual(["retryPolicy.maxAttempts: 7 is treated as 5 (gRFC A6's client-side maximum, maxRetryAttempts)"]);
    expect(parseGrpcServiceConfig({ ...A6_POLICY, maxAttempts: 5 }).retryPolicy!.maxAttemptsCapped).toBe(false);
  });

  it('maxRetryAttempts moves the cap: up (7 of 7) or down (3 of 4); 1 means no retries', () => {
    expect(parseGrpcServiceConfig({ ...A6_POLICY, maxAttempts: 7 }, { maxRetryAttempts: 7 }).retryPolicy).toMatchObject({ maxAttempts: 7, maxAttemptsCapped: false });
    expect(parseGrpcServiceConfig({ ...A6_POLICY, maxAttempts: 9 }, { maxRetryAttempts: 7 }).retryPolicy).toMatchObject({ maxAttempts: 7, maxAttemptsCapped: true });
    const lower = parseGrpcServiceConfig(A6_POLICY, { maxRetryAttempts: 3 });
    expect(lower.retryPolicy).toMatchObject({ maxAttempts: 3, requestedMaxAttempts: 4, maxAttemptsCapped: true });
    expect(lower.warnings).toEqual(["retryPolicy.maxAttempts: 4 is treated as 3 (gRFC A6's client-side maximum, maxRetryAttempts)"]);
    expect(parseGrpcServiceConfig(A6_POLICY, { maxRetryAttempts: 1 }).retryOptions.maxAttempts).toBe(1);
    for (const bad of [0, -1, 2.5, '7', Infinity, NaN]) {
      const error = invalidOption(() => parseGrpcServiceConfig(A6_POLICY, { maxRetryAttempts: bad as number }));
      expect(error.field).toBe('options.maxRetryAttempts');
      expect(error.value).toBe(bad);
    }
  });

  it('normalises status codes: names in any case and numbers, duplicates dropped', () => {
    const c = parseGrpcServiceConfig({ ...A6_POLICY, retryableStatusCodes: ['unavailable', 4, 'UNAVAILABLE', 'Resource_Exhausted'] });
    expect(c.retryPolicy!.retryableStatusCodes).toEqual(['UNAVAILABLE', 'DEADLINE_EXCEEDED', 'RESOURCE_EXHAUSTED']);
    expect(c.retryable({ code: 8 })).toBe(true);
    expect(c.retryable({ code: 'DEADLINE_EXCEEDED' })).toBe(true);
  });

  it('truncates retryThrottling to 3 decimal places', () => {
    const c = parseGrpcServiceConfig({ retryThrottling: { maxTokens: 10.12345, tokenRatio: 0.1239 } });
    expect(c.retryThrottling).toEqual({ maxTokens: 10.123, tokenRatio: 0.123 });
    expect(c.retryPolicy).toBeUndefined();
    expect(c.retryOptions.maxAttempts).toBe(1); // no retryPolicy: gRPC does not retry
    expect(c.retryOptions.retryable({ code: 14 })).toBe(false);
  });

  it('picks the method config by gRPC’s lookup: service and method, then service, then default', () => {
    const fast = { ...A6_POLICY, maxAttempts: 2 };
    const slow = { ...A6_POLICY, maxAttempts: 3 };
    const all = { ...A6_POLICY, maxAttempts: 5 };
    const config = {
      methodConfig: [
        { name: [{}], retryPolicy: all },
        { name: [{ service: 'a.S' }], retryPolicy: slow },
        { name: [{ service: 'a.S', method: 'Get' }], retryPolicy: fast },
        { name: [{ service: 'b.S', method: 'Put' }] },
      ],
    };
    const attempts = (service?: string, method?: string): number | undefined =>
      parseGrpcServiceConfig(config, { service, method }).retryPolicy?.maxAttempts;
    expect(attempts('a.S', 'Get')).toBe(2);
    expect(attempts('a.S', 'List')).toBe(3);
    expect(attempts('a.S')).toBe(3);
    expect(attempts('c.S', 'Get')).toBe(5);
    expect(attempts('b.S', 'Put')).toBeUndefined(); // named, without a retry policy: no retries
    const unnamed = parseGrpcServiceConfig(config);
    expect(unnamed.retryPolicy!.path).toBe('methodConfig[0].retryPolicy');
    expect(unnamed.warnings).toEqual(['3 methodConfig entries have a retryPolicy; using methodConfig[0].retryPolicy (pass service and method to choose)']);
  });

  it('full jitter on request: uniform(0, capped value), as gRFC A6’s text gives it', () => {
    const b = parseGrpcServiceConfig(A6_POLICY, { jitter: 'full' }).retryPolicy!.backoff;
    expect(b.name).toBe('full jitter');
    expect(b.delay(2, 0, fixed(0.5))).toBe(100);
  });

  it('accepts what gRPC accepts, with warnings: a huge maxBackoff, initialBackoff above maxBackoff, hedging alone', () => {
    const huge = parseGrpcServiceConfig({ ...A6_POLICY, maxBackoff: '100000000s' });
    expect(huge.retryPolicy!.maxBackoffMs).toBe(2_147_483_647);
    expect(huge.warnings).toHaveLength(1);
    const inverted = parseGrpcServiceConfig({ ...A6_POLICY, initialBackoff: '2s', maxBackoff: '1s' });
    expect(inverted.retryPolicy!.initialBackoffMs).toBe(2000); // as written; the waits start at maxBackoff
    expect(inverted.retryPolicy!.backoff.delay(1, 0, fixed(0.5))).toBeCloseTo(1000, 9);
    expect(inverted.warnings).toEqual(["retryPolicy.initialBackoff: above maxBackoff, so every wait is maxBackoff (gRFC A6's formula; grpc-js waits initialBackoff first)"]);
    const hedged = parseGrpcServiceConfig({ methodConfig: [{ name: [{ service: 'a.S' }], hedgingPolicy: { maxAttempts: 3 } }] });
    expect(hedged.retryPolicy).toBeUndefined();
    expect(hedged.warnings).toEqual(['methodConfig[0].hedgingPolicy: herdless does not hedge; the method is not retried (grpc-js hedges it)']);
    const decaying = parseGrpcServiceConfig({ ...A6_POLICY, initialBackoff: '2s', backoffMultiplier: 0.5 });
    expect(decaying.retryPolicy!.backoff.delay(2, 0, fixed(0.5))).toBeCloseTo(500, 9);
    expect(decaying.warnings).toEqual(['retryPolicy.initialBackoff: above maxBackoff with backoffMultiplier < 1; the waits decay from maxBackoff at once']);
  });

  const policy = (patch: Record<string, unknown>): unknown => ({ methodConfig: [{ name: [{}], retryPolicy: { ...A6_POLICY, ...patch } }] });
  const rp = 'methodConfig[0].retryPolicy';
  it.each([
    { name: 'maxAttempts 1', input: policy({ maxAttempts: 1 }), field: `${rp}.maxAttempts`, says: 'must be an integer ≥ 2, got 1' },
    { name: 'maxAttempts 2.5', input: policy({ maxAttempts: 2.5 }), field: `${rp}.maxAttempts`, says: 'must be an integer ≥ 2' },
    { name: 'maxAttempts "4"', input: policy({ maxAttempts: '4' }), field: `${rp}.maxAttempts`, says: 'got "4"' },
    { name: 'maxAttempts missing', input: policy({ maxAttempts: undefined }), field: `${rp}.maxAttempts`, says: 'is required, got undefined' },
    { name: 'maxAttempts misspelt', input: policy({ maxAttempts: undefined, maxAttemps: 3 }), field: `${rp}.maxAttempts`, says: 'is required (the object has "maxAttemps": a misspelling?)' },
    { name: 'maxTokens misspelt', input: { retryThrottling: { MaxToken: 10, tokenRatio: 0.1 } }, field: 'retryThrottling.maxTokens', says: '(the object has "MaxToken": a misspelling?)' },
    { name: 'initialBackoff 100ms', input: policy({ initialBackoff: '100ms' }), field: `${rp}.initialBackoff`, says: 'must be a duration' },
    { name: 'initialBackoff 0s', input: policy({ initialBackoff: '0s' }), field: `${rp}.initialBackoff`, says: 'must be > 0' },
    { name: 'initialBackoff 0.1', input: policy({ initialBackoff: 0.1 }), field: `${rp}.initialBackoff`, says: 'must be a duration' },
    { name: 'maxBackoff 0.0s', input: policy({ maxBackoff: '0.0s' }), field: `${rp}.maxBackoff`, says: 'must be > 0' },
    { name: 'maxBackoff missing', input: policy({ maxBackoff: undefined }), field: `${rp}.maxBackoff`, says: 'is required' },
    { name: 'backoffMultiplier 0', input: policy({ backoffMultiplier: 0 }), field: `${rp}.backoffMultiplier`, says: 'must be a finite number > 0' },
    { name: 'backoffMultiplier "2"', input: policy({ backoffMultiplier: '2' }), field: `${rp}.backoffMultiplier`, says: 'must be a finite number > 0' },
    { name: 'retryableStatusCodes []', input: policy({ retryableStatusCodes: [] }), field: `${rp}.retryableStatusCodes`, says: 'must be a non-empty array' },
    { name: 'retryableStatusCodes "UNAVAILABLE"', input: policy({ retryableStatusCodes: 'UNAVAILABLE' }), field: `${rp}.retryableStatusCodes`, says: 'must be a non-empty array' },
    { name: 'a status name typo', input: policy({ retryableStatusCodes: ['UNAVAILABLE', 'UNAVAILBLE'] }), field: `${rp}.retryableStatusCodes[1]`, says: 'must be a gRPC status name' },
    { name: 'status 17', input: policy({ retryableStatusCodes: [17] }), field: `${rp}.retryableStatusCodes[0]`, says: 'code 0–16' },
    { name: 'retryPolicy not an object', input: { methodConfig: [{ name: [], retryPolicy: [] }] }, field: rp, says: 'must be an object' },
    { name: 'methodConfig not an array', input: { methodConfig: {} }, field: 'methodConfig', says: 'must be an array' },
    { name: 'a method without a service', input: { methodConfig: [{ name: [{ method: 'Get' }] }] }, field: 'methodConfig[0].name[0].method', says: 'needs a service' },
    { name: 'a duplicate name', input: { methodConfig: [{ name: [{ service: 'a' }] }, { name: [{ service: 'a' }] }] }, field: 'methodConfig[1].name[0]', says: 'is named twice' },
    { name: 'hedging with retries', input: { methodConfig: [{ name: [], retryPolicy: A6_POLICY, hedgingPolicy: {} }] }, field: 'methodConfig[0].hedgingPolicy', says: 'cannot be set with retryPolicy' },
    { name: 'a bad entry that is not picked', input: { methodConfig: [{ name: [{}], retryPolicy: A6_POLICY }, { name: [], retryPolicy: { ...A6_POLICY, maxAttempts: 0 } }] }, field: 'methodConfig[1].retryPolicy.maxAttempts', says: 'must be an integer ≥ 2' },
    { name: 'maxTokens 0', input: { retryThrottling: { maxTokens: 0, tokenRatio: 0.1 } }, field: 'retryThrottling.maxTokens', says: 'must be > 0' },
    { name: 'maxTokens 1001', input: { retryThrottling: { maxTokens: 1001, tokenRatio: 0.1 } }, field: 'retryThrottling.maxTokens', says: 'must be ≤ 1000' },
    { name: 'maxTokens missing', input: { retryThrottling: { tokenRatio: 0.1 } }, field: 'retryThrottling.maxTokens', says: 'is required' },
    { name: 'tokenRatio 0', input: { retryThrottling: { maxTokens: 10, tokenRatio: 0 } }, field: 'retryThrottling.tokenRatio', says: 'must be > 0' },
    { name: 'tokenRatio 0.0001', input: { retryThrottling: { maxTokens: 10, tokenRatio: 0.0001 } }, field: 'retryThrottling.tokenRatio', says: '3 decimal places' },
    { name: 'tokenRatio "0.1"', input: { retryThrottling: { maxTokens: 10, tokenRatio: '0.1' } }, field: 'retryThrottling.tokenRatio', says: 'must be a number' },
    { name: 'bare policy, bad field', input: { ...A6_POLICY, backoffMultiplier: -2 }, field: 'retryPolicy.backoffMultiplier', says: 'must be a finite number > 0' },
    { name: 'retryPolicy beside methodConfig', input: { retryPolicy: A6_POLICY, methodConfig: [] }, field: 'retryPolicy', says: 'inside methodConfig' },
    { name: 'broken JSON', input: '{"methodConfig": [', field: 'serviceConfig', says: 'must be valid JSON' },
    { name: 'an array', input: [], field: 'serviceConfig', says: 'must be an object' },
  ])('rejects $name, naming $field', ({ input, field, says }) => {
    const r = invalidOption(() => parseGrpcServiceConfig(input));
    expect(r.field).toBe(field);
    expect(r.message).toContain(says);
    expect(r.message.startsWith(`parseGrpcServiceConfig: ${field} `)).toBe(true);
  });

  it('rejects bad options', () => {
    expect(invalidOption(() => parseGrpcServiceConfig(A6_CONFIG, { jitter: 'equal' as never })).field).toBe('options.jitter');
    expect(invalidOption(() => parseGrpcServiceConfig(A6_CONFIG, { method: 'Get' })).field).toBe('options.method');
  });
});

describe('parseGrpcPushback (gRFC A6)', () => {
  it.each([
    ['2000', 2000],
    ['0', 0],
    [' 15 ', 15],
    [['300', '9'], 300],
    [Buffer.from('42'), 42],
    ['99999999999999999999', Number.MAX_SAFE_INTEGER],
  ])('%j → %j ms', (value, ms) => {
    expect(parseGrpcPushback(value)).toBe(ms);
  });
  it.each(['-1', 'abc', '1.5', '', '1e3', '0x10', '+5', 5, {}])('%j → "do-not-retry"', (value) => {
    expect(parseGrpcPushback(value)).toBe('do-not-retry');
  });
  it.each([undefined, null, []])('%j → undefined (no pushback)', (value) => {
    expect(parseGrpcPushback(value)).toBeUndefined();
  });
});

describe('throttles per server name', () => {
  it('normalises targets and URLs to one server name', () => {
    expect(grpcServerName('dns:///API.example.com:443')).toBe('api.example.com:443');
    expect(grpcServerName('dns://8.8.8.8/api.example.com:443')).toBe('api.example.com:443');
    expect(grpcServerName('api.example.com:443')).toBe('api.example.com:443');
    expect(grpcServerName('https://api.example.com:8443/pkg.Svc/Call')).toBe('api.example.com:8443');
    expect(grpcServerName('unix:/run/app.sock')).toBe('unix:/run/app.sock');
  });

  it('one bucket per server name; other retryThrottling values start a new, full one', () => {
    const name = 'throttle-test.invalid:1';
    expect(grpcThrottleOf(name)).toBeUndefined();
    const a = grpcThrottleFor(name, { maxTokens: 10, tokenRatio: 0.1 });
    a.onFailure(0);
    expect(grpcThrottleFor(`dns:///${name}`, { maxTokens: 10, tokenRatio: 0.1 })).toBe(a);
    expect(grpcThrottleOf(name)?.tokens).toBe(9);
    const b = grpcThrottleFor(name, { maxTokens: 20, tokenRatio: 0.1 });
    expect(b).not.toBe(a);
    expect(b.tokens).toBe(20);
    expect(grpcThrottleOf(name)).toBe(b);
  });

  it.each([
    ['grpcServerName', () => grpcServerName(42 as never), 'grpcServerName: target must be a string (a gRPC target or a URL), got 42'],
    ['grpcThrottleOf', () => grpcThrottleOf(undefined as never), 'grpcThrottleOf: serverName must be a string (a gRPC target or a URL), got undefined'],
    ['grpcThrottleFor', () => grpcThrottleFor({} as never, { maxTokens: 10, tokenRatio: 0.1 }), 'grpcThrottleFor: serverName must be a string (a gRPC target or a URL), got an object (Object)'],
    ['grpcThrottleFor', () => grpcThrottleFor('bad-throttling.invalid:1', undefined as never), 'grpcThrottleFor: throttling must be an object { maxTokens, tokenRatio } (gRFC A6 retryThrottling), got undefined'],
    ['grpcThrottleFor', () => grpcThrottleFor('bad-throttling.invalid:1', { maxTokens: 0, tokenRatio: 0.1 }), 'retryThrottlingBudget: maxTokens must be > 0, got 0'],
  ])('%s with a wrong argument from JavaScript throws InvalidOptionError naming it', (_name, call, message) => {
    expect(invalidOption(call).message).toBe(message);
  });
});
