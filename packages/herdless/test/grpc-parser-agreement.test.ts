/**
 * The service-config parser against grpc-js 1.14's own validator (the oracle, a devDependency):
 * a table of configs, valid and invalid, over every field. Both must accept or both reject, and an
 * accepted config must give the same values for every method it names — except the deliberate
 * deviations in DEVIATIONS, each of which docs/grpc.md lists.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isInvalidOptionError } from 'herdless';
import { parseGrpcPushback, parseGrpcServiceConfig, type GrpcStatusName } from 'herdless/grpc';
import { describe, expect, it, vi } from 'vitest';

const require = createRequire(import.meta.url);
const oracle = require('@grpc/grpc-js/build/src/service-config.js') as { validateServiceConfig(obj: unknown): OracleConfig };
const selector = require('@grpc/grpc-js/build/src/resolving-load-balancer.js') as {
  getDefaultConfigSelector(config: OracleConfig): { invoke(method: string, metadata: unknown, channelId: number): { methodConfig: OracleMethod } };
};
const { Metadata } = require('@grpc/grpc-js') as { Metadata: new () => unknown };
const { Status } = require('@grpc/grpc-js/build/src/constants.js') as { Status: Record<string, number> & Record<number, string> };
const { RetryingCall } = require('@grpc/grpc-js/build/src/retrying-call.js') as { RetryingCall: new (...args: unknown[]) => OracleCall };

/** grpc-js's own retrying call, built without a channel, for its backoff, status matching and pushback. */
interface OracleCall {
  readonly maxAttempts: number;
  getNextRetryBackoffMs(): number;
  isStatusCodeInList(list: (number | string)[], code: number): boolean;
  getPushback(metadata: unknown): number | null;
}
function oracleCall(retryPolicy: OracleRetry | undefined, channelOptions: Record<string, unknown> = {}): OracleCall {
  const channel = { getOptions: () => channelOptions };
  return new RetryingCall(channel, { methodConfig: { name: [], retryPolicy } }, '/a.S/M', 'localhost', null, Infinity, 1, null, undefined);
}

/** grpc-js's first `n` waits without jitter (its jitter is 0.8 + 0.4 × Math.random(): 0.5 gives 1). */
function oracleWaits(retryPolicy: OracleRetry, n: number): number[] {
  const call = oracleCall(retryPolicy);
  const spy = vi.spyOn(Math, 'random').mockReturnValue(0.5);
  try {
    return Array.from({ length: n }, () => call.getNextRetryBackoffMs());
  } finally {
    spy.mockRestore();
  }
}

interface OracleRetry {
  maxAttempts: number;
  initialBackoff: string;
  maxBackoff: string;
  backoffMultiplier: number;
  retryableStatusCodes: (number | string)[];
}
interface OracleMethod {
  name: { service?: string; method?: string }[];
  retryPolicy?: OracleRetry;
  hedgingPolicy?: { maxAttempts: number; hedgingDelay?: string; nonFatalStatusCodes?: unknown };
}
interface OracleConfig {
  methodConfig: OracleMethod[];
  retryThrottling?: { maxTokens: number; tokenRatio: number };
}

/**
 * The deliberate deviations from grpc-js, each a row of docs/grpc.md's deviation table (by its key).
 * Of the service configs: `rejects`, herdless rejects what grpc-js accepts; `values`, both accept
 * and herdless reads a value differently; `waits`, both read the same values and the waits
 * differ (herdless follows gRFC A6's formula). `behaviour`: how the interceptors act on sockets, pinned by grpc-interceptor.test.ts,
 * connect-interceptor.test.ts and grpc-streams.test.ts (and checked here where grpc-js's own code
 * can answer without a socket).
 */
const DEVIATIONS = {
  'zero-backoff': 'rejects', // initialBackoff / maxBackoff "0s": gRFC A6 and service_config.proto require > 0
  'method-config-not-array': 'rejects', // a methodConfig that is not an array: grpc-js ignores it silently
  'config-not-object': 'rejects', // a service config that is a JSON array: grpc-js reads [] as {}
  'infinite-number': 'rejects', // a number that overflows to Infinity (1e400): not a finite JSON number
  'non-ascii-status': 'rejects', // "unavaılable": grpc-js's validator passes it, its runtime never matches it
  'throttling-decimals': 'values', // maxTokens / tokenRatio: 3 decimals kept by truncation (gRPC core), grpc-js rounds
  'throttling-below-0.001': 'rejects', // a maxTokens / tokenRatio that keeps no thousandth (grpc-js rounds to 0 or 0.001)
  'huge-max-backoff': 'values', // maxBackoff above 2^31 − 1 ms is held there (the longest timer)
  'initial-above-max': 'waits', // initialBackoff > maxBackoff: A6's first wait is maxBackoff, grpc-js's initialBackoff
  'malformed-pushback': 'behaviour', // "abc": A6 says do not retry; grpc-js parses NaN and retries at once
  'pushback-beyond-int32': 'behaviour', // 99999999999: not A6's 32-bit integer; grpc-js's timer fires after 1 ms
  'pushback-over-max-retry-after': 'behaviour', // above maxRetryAfterMs (60 s): the call ends; grpc-js waits
  'deadline-not-waited': 'behaviour', // a wait that would cross the deadline: the last status at once
  'refusal-not-waited': 'behaviour', // throttled, or the buffer outgrown during a wait: the last status at once
  'throttle-server-name': 'behaviour', // dns:///host:port and host:port share one bucket (A6: per server name)
  'throttle-config-change': 'behaviour', // new retryThrottling for a server name: a new, full bucket
  'retry-buffer-scope': 'behaviour', // the buffer limits are per interceptor; Connect counts protobuf binary bytes
  'connect-unary-commit': 'behaviour', // Connect unary: retried after response headers (the caller never saw them)
  'connect-protocol-commit': 'behaviour', // Connect protocol streams commit at the first message, not at headers
} as const;
type Deviation = keyof typeof DEVIATIONS;

interface Case {
  readonly name: string;
  readonly config: unknown;
  readonly deviation?: Deviation;
}

const A6 = { maxAttempts: 4, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] };
const withPolicy = (patch: Record<string, unknown>, name: unknown = [{ service: 'a.S' }]): unknown => ({
  methodConfig: [{ name, retryPolicy: { ...A6, ...patch } }],
});
const without = (key: string): unknown => {
  const p: Record<string, unknown> = { ...A6 };
  delete p[key];
  return { methodConfig: [{ name: [{ service: 'a.S' }], retryPolicy: p }] };
};
const method = (entry: Record<string, unknown>): unknown => ({ methodConfig: [{ name: [{ service: 'a.S' }], ...entry }] });
const throttle = (t: unknown): unknown => ({ methodConfig: [{ name: [{}], retryPolicy: A6 }], retryThrottling: t });

const CASES: Case[] = [
  // The whole config.
  { name: 'empty config', config: {} },
  { name: "A6's example", config: withPolicy({}) },
  { name: 'A6 example with throttling', config: { ...(withPolicy({}) as object), retryThrottling: { maxTokens: 10, tokenRatio: 0.1 } } },
  { name: 'methodConfig []', config: { methodConfig: [] } },
  { name: 'methodConfig {}', config: { methodConfig: {} }, deviation: 'method-config-not-array' },
  { name: 'methodConfig "x"', config: { methodConfig: 'x' }, deviation: 'method-config-not-array' },
  { name: 'service config []', config: [], deviation: 'config-not-object' },
  { name: 'service config [A6 example]', config: [withPolicy({})], deviation: 'config-not-object' },
  { name: 'methodConfig entry null', config: { methodConfig: [null] } },
  { name: 'methodConfig entry 5', config: { methodConfig: [5] } },
  { name: 'methodConfig entry without name', config: { methodConfig: [{ retryPolicy: A6 }] } },
  { name: 'name not an array', config: { methodConfig: [{ name: {}, retryPolicy: A6 }] } },
  { name: 'name []', config: withPolicy({}, []) },
  { name: 'default name [{}]', config: withPolicy({}, [{}]) },
  { name: 'name null entry', config: withPolicy({}, [null]) },
  { name: 'name "a.S" entry', config: withPolicy({}, ['a.S']) },
  { name: 'service and method', config: withPolicy({}, [{ service: 'a.S', method: 'Get' }]) },
  { name: 'service ""', config: withPolicy({}, [{ service: '' }]) },
  { name: 'service "" and method ""', config: withPolicy({}, [{ service: '', method: '' }]) },
  { name: 'method "" alone', config: withPolicy({}, [{ method: '' }]) },
  { name: 'method alone', config: withPolicy({}, [{ method: 'Get' }]) },
  { name: 'service null', config: withPolicy({}, [{ service: null }]) },
  { name: 'service 5', config: withPolicy({}, [{ service: 5 }]) },
  { name: 'method null beside a service', config: withPolicy({}, [{ service: 'a.S', method: null }]) },
  { name: 'method 5 beside a service', config: withPolicy({}, [{ service: 'a.S', method: 5 }]) },
  { name: 'method "" beside a service', config: withPolicy({}, [{ service: 'a.S', method: '' }]) },
  { name: 'method null, service ""', config: withPolicy({}, [{ service: '', method: null }]) },
  { name: 'unknown name key', config: withPolicy({}, [{ service: 'a.S', region: 'eu' }]) },
  { name: 'several names', config: withPolicy({}, [{ service: 'a.S' }, { service: 'b.S', method: 'Put' }]) },
  { name: 'duplicate names in one entry', config: withPolicy({}, [{ service: 'a.S' }, { service: 'a.S' }]) },
  { name: 'duplicate default names', config: { methodConfig: [{ name: [{}] }, { name: [{ service: '' }] }] } },
  { name: 'duplicates across entries', config: { methodConfig: [{ name: [{ service: 'a.S', method: 'M' }] }, { name: [{ service: 'a.S', method: 'M' }], retryPolicy: A6 }] } },
  { name: 'service-only and service+method are distinct', config: { methodConfig: [{ name: [{ service: 'a.S' }], retryPolicy: A6 }, { name: [{ service: 'a.S', method: 'M' }], retryPolicy: { ...A6, maxAttempts: 2 } }] } },
  { name: 'method "" same as no method (duplicate)', config: { methodConfig: [{ name: [{ service: 'a.S' }] }, { name: [{ service: 'a.S', method: '' }] }] } },
  { name: 'three levels of lookup', config: { methodConfig: [{ name: [{}], retryPolicy: { ...A6, maxAttempts: 2 } }, { name: [{ service: 'a.S' }], retryPolicy: { ...A6, maxAttempts: 3 } }, { name: [{ service: 'a.S', method: 'M' }], retryPolicy: A6 }] } },
  { name: 'entry without a policy', config: { methodConfig: [{ name: [{ service: 'a.S' }] }] } },
  { name: 'unknown top-level field', config: { methodConfig: [], healthCheckConfig: { serviceName: 'x' } } },
  // retryPolicy: maxAttempts.
  ...[2, 3, 5, 6, 100, 2.0].map((v) => ({ name: `maxAttempts ${v}`, config: withPolicy({ maxAttempts: v }) })),
  ...[1, 0, -3, 2.5, '4', null, true, [4]].map((v) => ({ name: `maxAttempts ${JSON.stringify(v)}`, config: withPolicy({ maxAttempts: v }) })),
  { name: 'maxAttempts missing', config: without('maxAttempts') },
  // initialBackoff / maxBackoff.
  ...['1s', '0.5s', '10s', '0.000000001s', '1.123456789s', '120s'].map((v) => ({ name: `initialBackoff ${v}`, config: withPolicy({ initialBackoff: v, maxBackoff: '200s' }) })),
  ...['100ms', '1', '-1s', '1.5', '1.1234567891s', ' 1s', '1S', '.5s', '1.s', 0.1, null].map((v) => ({ name: `initialBackoff ${JSON.stringify(v)}`, config: withPolicy({ initialBackoff: v }) })),
  { name: 'initialBackoff "0s"', config: withPolicy({ initialBackoff: '0s' }), deviation: 'zero-backoff' },
  { name: 'maxBackoff "0.0s"', config: withPolicy({ maxBackoff: '0.0s' }), deviation: 'zero-backoff' },
  { name: 'initialBackoff missing', config: without('initialBackoff') },
  ...['2s', '5s', '0.001s', '30s'].map((v) => ({ name: `maxBackoff ${v}`, config: withPolicy({ maxBackoff: v, initialBackoff: '0.001s' }) })),
  ...['2', 'abc', 2, '1m', ''].map((v) => ({ name: `maxBackoff ${JSON.stringify(v)}`, config: withPolicy({ maxBackoff: v }) })),
  { name: 'maxBackoff missing', config: without('maxBackoff') },
  ...[
    { initialBackoff: '2s', maxBackoff: '1s' },
    { initialBackoff: '10s', maxBackoff: '1s', backoffMultiplier: 1 },
    { initialBackoff: '1.5s', maxBackoff: '0.1s', backoffMultiplier: 3 },
    { initialBackoff: '0.2s', maxBackoff: '0.199999999s' },
    { initialBackoff: '2s', maxBackoff: '1s', backoffMultiplier: 0.5 },
    { initialBackoff: '10s', maxBackoff: '1s', backoffMultiplier: 0.5 },
  ].map((patch) => ({ name: `initialBackoff above maxBackoff ${JSON.stringify(patch)}`, config: withPolicy(patch), deviation: 'initial-above-max' as const })),
  { name: 'maxBackoff 100000000s', config: withPolicy({ maxBackoff: '100000000s' }), deviation: 'huge-max-backoff' },
  // backoffMultiplier.
  ...[1, 1.6, 0.5, 10, 1e-9].map((v) => ({ name: `backoffMultiplier ${v}`, config: withPolicy({ backoffMultiplier: v }) })),
  ...[0, -2, '2', null, [2]].map((v) => ({ name: `backoffMultiplier ${JSON.stringify(v)}`, config: withPolicy({ backoffMultiplier: v }) })),
  // 1e400 in JSON text is Infinity once parsed, as grpc-js receives it.
  { name: 'backoffMultiplier 1e400', config: JSON.parse('{"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":4,"initialBackoff":"0.1s","maxBackoff":"1s","backoffMultiplier":1e400,"retryableStatusCodes":["UNAVAILABLE"]}}]}') as unknown, deviation: 'infinite-number' },
  { name: 'backoffMultiplier -1e400', config: withPolicy({ backoffMultiplier: -Infinity }) },
  { name: 'backoffMultiplier missing', config: without('backoffMultiplier') },
  // retryableStatusCodes.
  ...[['UNAVAILABLE', 'RESOURCE_EXHAUSTED'], ['unavailable'], ['Unavailable', 'aborted'], [14], [14, 'UNAVAILABLE'], [0], [16], ['OK'], ['DATA_LOSS', 'INTERNAL', 'UNKNOWN']].map((v) => ({
    name: `retryableStatusCodes ${JSON.stringify(v)}`,
    config: withPolicy({ retryableStatusCodes: v }),
  })),
  { name: 'retryableStatusCodes ["unavaılable"] (dotless ı)', config: withPolicy({ retryableStatusCodes: ['unavaılable'] }), deviation: 'non-ascii-status' },
  { name: 'retryableStatusCodes ["UNAVAİLABLE"] (dotted İ)', config: withPolicy({ retryableStatusCodes: ['UNAVAİLABLE'] }) },
  { name: 'retryableStatusCodes ["ınternal", "UNAVAILABLE"]', config: withPolicy({ retryableStatusCodes: ['ınternal', 'UNAVAILABLE'] }), deviation: 'non-ascii-status' },
  ...[[], ['resource-exhausted'], ['UNAVAILBLE'], [17], [-1], [1.5], ['14'], [null], [true], 'UNAVAILABLE', null, {}].map((v) => ({
    name: `retryableStatusCodes ${JSON.stringify(v)}`,
    config: withPolicy({ retryableStatusCodes: v }),
  })),
  { name: 'retryableStatusCodes missing', config: without('retryableStatusCodes') },
  { name: 'retryPolicy null', config: method({ retryPolicy: null }) },
  { name: 'retryPolicy []', config: method({ retryPolicy: [] }) },
  { name: 'retryPolicy "A6"', config: method({ retryPolicy: 'A6' }) },
  { name: 'retryPolicy {}', config: method({ retryPolicy: {} }) },
  { name: 'retryPolicy with an unknown field', config: withPolicy({ perAttemptRecvTimeout: '1s' }) },
  // hedgingPolicy.
  { name: 'hedgingPolicy valid', config: method({ hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.5s', nonFatalStatusCodes: ['UNAVAILABLE'] } }) },
  { name: 'hedgingPolicy only maxAttempts', config: method({ hedgingPolicy: { maxAttempts: 2 } }) },
  { name: 'hedgingPolicy as the default entry', config: { methodConfig: [{ name: [{}], hedgingPolicy: { maxAttempts: 4, hedgingDelay: '0.1s' } }] } },
  { name: 'hedgingPolicy {}', config: method({ hedgingPolicy: {} }) },
  { name: 'hedgingPolicy maxAttempts 1', config: method({ hedgingPolicy: { maxAttempts: 1 } }) },
  { name: 'hedgingPolicy maxAttempts 2.5', config: method({ hedgingPolicy: { maxAttempts: 2.5 } }) },
  { name: 'hedgingPolicy hedgingDelay "1"', config: method({ hedgingPolicy: { maxAttempts: 3, hedgingDelay: '1' } }) },
  { name: 'hedgingPolicy hedgingDelay 1', config: method({ hedgingPolicy: { maxAttempts: 3, hedgingDelay: 1 } }) },
  { name: 'hedgingPolicy nonFatalStatusCodes [99]', config: method({ hedgingPolicy: { maxAttempts: 3, nonFatalStatusCodes: [99] } }) },
  { name: 'hedgingPolicy nonFatalStatusCodes ["NOPE"]', config: method({ hedgingPolicy: { maxAttempts: 3, nonFatalStatusCodes: ['NOPE'] } }) },
  { name: 'hedgingPolicy nonFatalStatusCodes [null]', config: method({ hedgingPolicy: { maxAttempts: 3, nonFatalStatusCodes: [null] } }) },
  { name: 'hedgingPolicy nonFatalStatusCodes "x" (ignored)', config: method({ hedgingPolicy: { maxAttempts: 3, nonFatalStatusCodes: 'x' } }) },
  { name: 'hedgingPolicy null', config: method({ hedgingPolicy: null }) },
  { name: 'hedgingPolicy with retryPolicy', config: method({ retryPolicy: A6, hedgingPolicy: { maxAttempts: 3 } }) },
  // Other method-config fields.
  ...[true, false].map((v) => ({ name: `waitForReady ${v}`, config: method({ retryPolicy: A6, waitForReady: v }) })),
  ...['true', 1, null].map((v) => ({ name: `waitForReady ${JSON.stringify(v)}`, config: method({ retryPolicy: A6, waitForReady: v }) })),
  ...['1s', '0.5s', '30s', { seconds: 1, nanos: 0 }].map((v) => ({ name: `timeout ${JSON.stringify(v)}`, config: method({ retryPolicy: A6, timeout: v }) })),
  ...['1', '1m', 5, null, { seconds: '1', nanos: 0 }, { seconds: 1 }, { nanos: 5 }].map((v) => ({ name: `timeout ${JSON.stringify(v)}`, config: method({ retryPolicy: A6, timeout: v }) })),
  ...[1024, 0, -1, 1.5].map((v) => ({ name: `maxRequestBytes ${v}`, config: method({ retryPolicy: A6, maxRequestBytes: v }) })),
  ...['1024', null].map((v) => ({ name: `maxRequestBytes ${JSON.stringify(v)}`, config: method({ retryPolicy: A6, maxRequestBytes: v }) })),
  ...[4096, '4096', null].map((v) => ({ name: `maxResponseBytes ${JSON.stringify(v)}`, config: method({ retryPolicy: A6, maxResponseBytes: v }) })),
  // Load balancing.
  ...['round_robin', 'pick_first'].map((v) => ({ name: `loadBalancingPolicy ${v}`, config: { loadBalancingPolicy: v } })),
  ...[5, null, ['round_robin']].map((v) => ({ name: `loadBalancingPolicy ${JSON.stringify(v)}`, config: { loadBalancingPolicy: v } })),
  { name: 'loadBalancingConfig one policy', config: { loadBalancingConfig: [{ round_robin: {} }] } },
  { name: 'loadBalancingConfig two entries', config: { loadBalancingConfig: [{ round_robin: {} }, { pick_first: {} }] } },
  { name: 'loadBalancingConfig []', config: { loadBalancingConfig: [] } },
  { name: 'loadBalancingConfig {} entry', config: { loadBalancingConfig: [{}] } },
  { name: 'loadBalancingConfig two keys', config: { loadBalancingConfig: [{ round_robin: {}, pick_first: {} }] } },
  { name: 'loadBalancingConfig null entry', config: { loadBalancingConfig: [null] } },
  { name: 'loadBalancingConfig "round_robin" entry', config: { loadBalancingConfig: ['round_robin'] } },
  { name: 'loadBalancingConfig not an array', config: { loadBalancingConfig: { round_robin: {} } } },
  // retryThrottling.
  ...[
    { maxTokens: 10, tokenRatio: 0.1 },
    { maxTokens: 1000, tokenRatio: 1 },
    { maxTokens: 0.5, tokenRatio: 0.001 },
    { maxTokens: 100, tokenRatio: 5 },
  ].map((t) => ({ name: `retryThrottling ${JSON.stringify(t)}`, config: throttle(t) })),
  ...[
    { maxTokens: 0, tokenRatio: 0.1 },
    { maxTokens: 1001, tokenRatio: 0.1 },
    { maxTokens: -1, tokenRatio: 0.1 },
    { maxTokens: '10', tokenRatio: 0.1 },
    { tokenRatio: 0.1 },
    { maxTokens: 10, tokenRatio: 0 },
    { maxTokens: 10, tokenRatio: -0.1 },
    { maxTokens: 10, tokenRatio: '0.1' },
    { maxTokens: 10 },
    {},
  ].map((t) => ({ name: `retryThrottling ${JSON.stringify(t)}`, config: throttle(t) })),
  { name: 'retryThrottling null', config: throttle(null) },
  { name: 'retryThrottling tokenRatio 0.1239', config: throttle({ maxTokens: 10, tokenRatio: 0.1239 }), deviation: 'throttling-decimals' },
  { name: 'retryThrottling maxTokens 10.0005', config: throttle({ maxTokens: 10.0005, tokenRatio: 0.1 }), deviation: 'throttling-decimals' },
  { name: 'retryThrottling tokenRatio 0.0001', config: throttle({ maxTokens: 10, tokenRatio: 0.0001 }), deviation: 'throttling-below-0.001' },
  { name: 'retryThrottling maxTokens 0.0004', config: throttle({ maxTokens: 0.0004, tokenRatio: 0.1 }), deviation: 'throttling-below-0.001' },
  // grpc-js rounds these up to a working 0.001; truncation keeps no thousandth.
  { name: 'retryThrottling tokenRatio 0.0005', config: throttle({ maxTokens: 10, tokenRatio: 0.0005 }), deviation: 'throttling-below-0.001' },
  { name: 'retryThrottling tokenRatio 0.000999', config: throttle({ maxTokens: 10, tokenRatio: 0.000999 }), deviation: 'throttling-below-0.001' },
  { name: 'retryThrottling maxTokens 0.0007', config: throttle({ maxTokens: 0.0007, tokenRatio: 0.1 }), deviation: 'throttling-below-0.001' },
  { name: 'retryThrottling tokenRatio 1e400', config: JSON.parse('{"methodConfig":[],"retryThrottling":{"maxTokens":10,"tokenRatio":1e400}}') as unknown, deviation: 'infinite-number' },
];

function tryOracle(config: unknown): { ok: true; value: OracleConfig } | { ok: false; error: string } {
  try {
    return { ok: true, value: oracle.validateServiceConfig(config) };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

function tryOurs(config: unknown, service?: string, method?: string) {
  try {
    return { ok: true as const, value: parseGrpcServiceConfig(config, service === undefined ? undefined : { service, method }) };
  } catch (error) {
    if (!isInvalidOptionError(error)) throw error;
    return { ok: false as const, error };
  }
}

const durationMs = (text: string): number => {
  const [s, frac = ''] = text.slice(0, -1).split('.');
  return Number(s) * 1000 + Number(frac.padEnd(9, '0')) / 1e6;
};
const canonical = (codes: readonly (number | string)[]): string[] =>
  [...new Set(codes.map((c) => (typeof c === 'number' ? Status[c]! : c.toUpperCase())))].sort();

/** Method paths to look up: every name in the config, plus one nobody names. */
function probes(config: OracleConfig): [string, string][] {
  const out: [string, string][] = [['zz.Unnamed', 'Call']];
  for (const entry of config.methodConfig) {
    for (const n of entry.name) out.push([n.service ?? 'zz.Unnamed', n.method ?? 'Other']);
  }
  return out;
}

describe('parseGrpcServiceConfig agrees with grpc-js 1.14 (the oracle)', () => {
  it('has a table of at least 100 configs, valid and invalid', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(100);
    const accepted = CASES.filter((c) => tryOracle(c.config).ok).length;
    expect(accepted).toBeGreaterThanOrEqual(40);
    expect(CASES.length - accepted).toBeGreaterThanOrEqual(40);
  });

  it("docs/grpc.md's deviation table lists exactly the deviations known here, each once", () => {
    const doc = readFileSync(new URL('../../../docs/grpc.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Deliberate deviations from grpc-js'));
    const rows = [...section.matchAll(/^\| `([a-z0-9.-]+)` \|/gm)].map((m) => m[1]);
    expect([...rows].sort()).toEqual(Object.keys(DEVIATIONS).sort());
  });

  it('every deviation of the table is used: a config shows it, or it is a behaviour', () => {
    const used = new Set(CASES.map((c) => c.deviation).filter((d) => d !== undefined));
    for (const [key, kind] of Object.entries(DEVIATIONS)) if (kind !== 'behaviour') expect(used, key).toContain(key);
  });

  it("pushbacks (behaviour rows): grpc-js's parse against herdless's", () => {
    const call = oracleCall(undefined);
    const pushback = (value: string): number | null => {
      const md = new (Metadata as new () => { set(k: string, v: string): void })();
      md.set('grpc-retry-pushback-ms', value);
      return call.getPushback(md);
    };
    // malformed-pushback: grpc-js reads NaN, a timer of NaN fires at once; A6 says do not retry.
    expect(pushback('abc')).toBeNaN();
    expect(parseGrpcPushback('abc')).toBe('do-not-retry');
    // pushback-beyond-int32: grpc-js keeps the number, which no timer can wait (Node fires it after 1 ms).
    expect(pushback('99999999999')).toBe(99_999_999_999);
    expect(parseGrpcPushback('99999999999')).toBe(99_999_999_999);
    // Both agree on a valid and a negative pushback.
    expect(pushback('2000')).toBe(2000);
    expect(parseGrpcPushback('2000')).toBe(2000);
    expect(pushback('-1')).toBe(-1);
    expect(parseGrpcPushback('-1')).toBe('do-not-retry');
  });

  it("maxRetryAttempts is grpc-js's grpc-node.retry_max_attempts_limit: the same cap for 7 requested attempts", () => {
    const policy = { ...A6, maxAttempts: 7 };
    for (const limit of [undefined, 3, 5, 7, 10]) {
      const theirs = oracleCall(policy, limit === undefined ? {} : { 'grpc-node.retry_max_attempts_limit': limit }).maxAttempts;
      const ours = parseGrpcServiceConfig(policy, limit === undefined ? undefined : { maxRetryAttempts: limit }).retryPolicy!.maxAttempts;
      expect(ours, `limit ${limit}`).toBe(theirs);
    }
  });

  it.each(CASES)('$name', ({ config, deviation }) => {
    const theirs = tryOracle(config);
    const ours = tryOurs(config);
    if (deviation !== undefined && DEVIATIONS[deviation] === 'rejects') {
      // A deviation must be real: grpc-js accepts, herdless rejects with a named field.
      expect(theirs.ok).toBe(true);
      expect(ours.ok).toBe(false);
      if (deviation === 'non-ascii-status' && theirs.ok) {
        // grpc-js accepts the name, but its runtime never matches it to a status.
        const codes = theirs.value.methodConfig[0]!.retryPolicy!.retryableStatusCodes;
        const call = oracleCall(theirs.value.methodConfig[0]!.retryPolicy);
        const odd = codes.filter((c) => typeof c === 'string' && !/^[A-Za-z_]+$/.test(c));
        for (let code = 0; code <= 16; code++) expect(call.isStatusCodeInList(odd, code)).toBe(false);
      }
      return;
    }
    // The message rides along so that a disagreement shows what herdless objected to.
    expect(ours.ok ? 'accept' : `reject`, ours.ok ? '' : ours.error.message).toBe(theirs.ok ? 'accept' : 'reject');
    if (!theirs.ok || !ours.ok) {
      if (!ours.ok) expect(ours.error.message).toContain(ours.error.field);
      return;
    }
    const t = theirs.value.retryThrottling;
    const mine = ours.value.retryThrottling;
    if (deviation === 'throttling-decimals') {
      // herdless truncates to thousandths, grpc-js rounds: a real difference, at most 0.001.
      const raw = (config as { retryThrottling: { maxTokens: number; tokenRatio: number } }).retryThrottling;
      const truncated = (x: number) => Math.floor(x * 1000 + 1e-9) / 1000;
      expect(mine).toEqual({ maxTokens: truncated(raw.maxTokens), tokenRatio: truncated(raw.tokenRatio) });
      expect(mine).not.toEqual(t);
      expect(Math.abs(mine!.tokenRatio - t!.tokenRatio) + Math.abs(mine!.maxTokens - t!.maxTokens)).toBeLessThanOrEqual(0.001 + 1e-12);
    } else {
      expect(mine).toEqual(t);
    }
    const select = selector.getDefaultConfigSelector(theirs.value);
    let hedgedProbes = 0;
    for (const [service, method] of probes(theirs.value)) {
      const expected = select.invoke(`/${service}/${method}`, new Metadata(), 0).methodConfig.retryPolicy;
      const got = tryOurs(config, service, method);
      if (!got.ok) throw got.error;
      const policy = got.value.retryPolicy;
      if (expected === undefined) {
        expect(policy, `/${service}/${method}`).toBeUndefined();
        const hedged = select.invoke(`/${service}/${method}`, new Metadata(), 0).methodConfig.hedgingPolicy as OracleMethod['hedgingPolicy'];
        // A method grpc-js hedges: herdless reads the same hedging policy (maxAttempts capped at 5 as grpc-js caps it).
        if (hedged !== undefined) {
          hedgedProbes++;
          const codes = Array.isArray(hedged.nonFatalStatusCodes) ? canonical(hedged.nonFatalStatusCodes as (number | string)[]) : [];
          expect(got.value.hedgingPolicy, `/${service}/${method}`).toMatchObject({
            maxAttempts: Math.min(hedged.maxAttempts, 5),
            requestedMaxAttempts: hedged.maxAttempts,
            hedgingDelayMs: hedged.hedgingDelay === undefined ? 0 : durationMs(hedged.hedgingDelay),
          });
          expect([...got.value.hedgingPolicy!.nonFatalStatusCodes].sort()).toEqual([...new Set(codes)].sort());
        } else {
          expect(got.value.hedgingPolicy, `/${service}/${method}`).toBeUndefined();
        }
        continue;
      }
      expect(policy, `/${service}/${method}`).toBeDefined();
      const maxBackoffMs = deviation === 'huge-max-backoff' ? 2_147_483_647 : durationMs(expected.maxBackoff);
      expect({
        maxAttempts: policy!.requestedMaxAttempts,
        initialBackoffMs: policy!.initialBackoffMs,
        maxBackoffMs: policy!.maxBackoffMs,
        backoffMultiplier: policy!.backoffMultiplier,
        retryableStatusCodes: [...policy!.retryableStatusCodes].sort(),
      }).toEqual({
        maxAttempts: expected.maxAttempts,
        initialBackoffMs: durationMs(expected.initialBackoff),
        maxBackoffMs,
        backoffMultiplier: expected.backoffMultiplier,
        retryableStatusCodes: canonical(expected.retryableStatusCodes) as GrpcStatusName[],
      });
      // gRFC A6's cap: grpc-js uses at most 5 attempts, whatever the config says.
      expect(policy!.maxAttempts).toBe(Math.min(expected.maxAttempts, 5));
      expect(policy!.maxAttempts).toBe(oracleCall(expected).maxAttempts);
      // The waits without jitter: herdless's, grpc-js's, and gRFC A6's formula min(initial × m^(n−1), max).
      const half = { random: () => 0.5 };
      const ours4 = [1, 2, 3, 4].map((n) => policy!.backoff.delay(n, 0, half));
      const theirs4 = oracleWaits(expected, 4);
      const [initial, max, m] = [durationMs(expected.initialBackoff), maxBackoffMs, expected.backoffMultiplier];
      const a6 = [1, 2, 3, 4].map((n) => Math.min(initial * m ** (n - 1), max));
      const close = (a: number[], b: number[]): boolean => a.every((x, i) => Math.abs(x - b[i]!) <= 1e-9 * Math.max(1, Math.abs(x)));
      if (deviation === 'initial-above-max') {
        // grpc-js's first wait is initialBackoff, above the cap A6's formula applies.
        expect(theirs4[0]).toBeCloseTo(initial, 6);
        expect(ours4[0]).toBeCloseTo(max, 6);
        // With m ≥ 1 herdless is A6's formula; with m < 1 its waits decay from maxBackoff at once.
        if (m >= 1) expect(close(ours4, a6), `${ours4} vs A6 ${a6}`).toBe(true);
        else expect(ours4.map((w, i) => Math.abs(w - max * m ** i) <= 1e-6)).toEqual([true, true, true, true]);
      } else {
        expect(close(ours4, theirs4), `${ours4} vs grpc-js ${theirs4}`).toBe(true);
        expect(close(ours4, a6), `${ours4} vs A6 ${a6}`).toBe(true);
      }
    }
    if (JSON.stringify(config).includes('hedgingPolicy') && theirs.ok) expect(hedgedProbes).toBeGreaterThan(0);
  });
});

describe('parseGrpcServiceConfig options', () => {
  it('rejects a misspelt option instead of silently picking another entry', () => {
    const error = (() => {
      try {
        parseGrpcServiceConfig(withPolicy({}), { servise: 'a.S' } as never);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(isInvalidOptionError(error)).toBe(true);
    expect((error as { field: string; value: unknown }).field).toBe('servise');
    expect((error as { field: string; value: unknown }).value).toBe('a.S');
  });
});
