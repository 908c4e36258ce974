/**
 * The service-config parser against grpc-js 1.14's own validator (the oracle, a devDependency):
 * a table of configs, valid and invalid, over every field. Both must accept or both reject, and an
 * accepted config must give the same values for every method it names — except the deliberate
 * deviations in DEVIATIONS, each of which docs/grpc.md lists.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isInvalidOptionError } from 'herdless';
import { parseGrpcServiceConfig, type GrpcStatusName } from 'herdless/grpc';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const oracle = require('@grpc/grpc-js/build/src/service-config.js') as { validateServiceConfig(obj: unknown): OracleConfig };
const selector = require('@grpc/grpc-js/build/src/resolving-load-balancer.js') as {
  getDefaultConfigSelector(config: OracleConfig): { invoke(method: string, metadata: unknown, channelId: number): { methodConfig: OracleMethod } };
};
const { Metadata } = require('@grpc/grpc-js') as { Metadata: new () => unknown };
const { Status } = require('@grpc/grpc-js/build/src/constants.js') as { Status: Record<string, number> & Record<number, string> };

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
}
interface OracleConfig {
  methodConfig: OracleMethod[];
  retryThrottling?: { maxTokens: number; tokenRatio: number };
}

/**
 * The deliberate deviations from grpc-js. `rejects`: herdless rejects what grpc-js accepts;
 * `values`: both accept, herdless reads a value differently. docs/grpc.md lists each by its key.
 */
const DEVIATIONS = {
  'zero-backoff': 'rejects', // initialBackoff / maxBackoff "0s": gRFC A6 and service_config.proto require > 0
  'method-config-not-array': 'rejects', // a methodConfig that is not an array: grpc-js ignores it silently
  'throttling-decimals': 'values', // maxTokens / tokenRatio: 3 decimals kept by truncation (gRPC core), grpc-js rounds
  'throttling-below-0.001': 'rejects', // a maxTokens / tokenRatio that keeps no thousandth (grpc-js makes it 0)
  'huge-max-backoff': 'values', // maxBackoff above 2^31 − 1 ms is held there (the longest timer)
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
  { name: 'initialBackoff above maxBackoff', config: withPolicy({ initialBackoff: '2s', maxBackoff: '1s' }) },
  { name: 'initialBackoff above maxBackoff, multiplier 0.5', config: withPolicy({ initialBackoff: '2s', maxBackoff: '1s', backoffMultiplier: 0.5 }) },
  { name: 'maxBackoff 100000000s', config: withPolicy({ maxBackoff: '100000000s' }), deviation: 'huge-max-backoff' },
  // backoffMultiplier.
  ...[1, 1.6, 0.5, 10, 1e-9].map((v) => ({ name: `backoffMultiplier ${v}`, config: withPolicy({ backoffMultiplier: v }) })),
  ...[0, -2, '2', null, [2]].map((v) => ({ name: `backoffMultiplier ${JSON.stringify(v)}`, config: withPolicy({ backoffMultiplier: v }) })),
  { name: 'backoffMultiplier missing', config: without('backoffMultiplier') },
  // retryableStatusCodes.
  ...[['UNAVAILABLE', 'RESOURCE_EXHAUSTED'], ['unavailable'], ['Unavailable', 'aborted'], [14], [14, 'UNAVAILABLE'], [0], [16], ['OK'], ['DATA_LOSS', 'INTERNAL', 'UNKNOWN']].map((v) => ({
    name: `retryableStatusCodes ${JSON.stringify(v)}`,
    config: withPolicy({ retryableStatusCodes: v }),
  })),
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

  it('every deliberate deviation is listed in docs/grpc.md', () => {
    const doc = readFileSync(new URL('../../../docs/grpc.md', import.meta.url), 'utf8');
    for (const key of Object.keys(DEVIATIONS)) expect(doc).toContain(`\`${key}\``);
  });

  it.each(CASES)('$name', ({ config, deviation }) => {
    const theirs = tryOracle(config);
    const ours = tryOurs(config);
    if (deviation !== undefined && DEVIATIONS[deviation] === 'rejects') {
      // A deviation must be real: grpc-js accepts, herdless rejects with a named field.
      expect(theirs.ok).toBe(true);
      expect(ours.ok).toBe(false);
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
    for (const [service, method] of probes(theirs.value)) {
      const expected = select.invoke(`/${service}/${method}`, new Metadata(), 0).methodConfig.retryPolicy;
      const got = tryOurs(config, service, method);
      if (!got.ok) throw got.error;
      const policy = got.value.retryPolicy;
      if (expected === undefined) {
        expect(policy, `/${service}/${method}`).toBeUndefined();
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
    }
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
