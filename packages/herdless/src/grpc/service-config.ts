import type { Backoff } from '../core/backoff/backoff.js';
import { MAX_DELAY_MS } from '../core/backoff/backoff.js';
import { fullJitterBackoff, proportionalJitterBackoff } from '../core/backoff/exponential.js';
import { retryThrottlingBudget, type RetryThrottlingBudget } from '../core/budget/retry-throttling.js';
import { InvalidOptionError } from '../core/errors.js';
import { numberOption, objectOption } from '../core/validate.js';
import { grpcDurationMs } from './duration.js';
import { grpcStatusName, grpcStatusOf, type GrpcStatusName } from './status.js';

const OWNER = 'parseGrpcServiceConfig';

/** gRFC A6: "maxAttempts … values greater than 5 are treated as 5" (the default of `maxRetryAttempts`). */
export const GRPC_MAX_ATTEMPTS_CAP = 5;

/** @internal The range of `maxRetryAttempts`: an integer ≥ 1. */
export const MAX_RETRY_ATTEMPTS_RULE = { min: 1, max: Number.MAX_SAFE_INTEGER, integer: true };

/** Options of {@link parseGrpcServiceConfig}. */
export interface ParseGrpcServiceConfigOptions {
  /**
   * The fully qualified service whose policy to pick (e.g. `'helloworld.Greeter'`), with `method`
   * (e.g. `'SayHello'`), by gRPC's lookup: the entry naming the service and method, else the one
   * naming only the service, else the default entry (`"name": [{}]`). Without it, the first
   * `methodConfig` entry that has a `retryPolicy` is used.
   */
  service?: string | undefined;
  /** The method, with `service`. */
  method?: string | undefined;
  /**
   * The backoff to build. `'proportional'` (default): gRPC core's ±20% around the capped
   * exponential value — what the article's lab uses. `'full'`: uniform(0, capped value), the
   * formula gRFC A6's text gives ("random(0, min(initialBackoff × backoffMultiplier^(n−1),
   * maxBackoff))").
   */
  jitter?: 'proportional' | 'full' | undefined;
  /**
   * The client-side maximum of `maxAttempts`: a larger value in the config is treated as this one
   * (`maxAttemptsCapped`). Default 5, gRFC A6's ("Limits on Retries and Hedges": the client may
   * change it). grpc-java calls the channel option `maxRetryAttempts`; grpc-js
   * `grpc-node.retry_max_attempts_limit`. An integer ≥ 1.
   */
  maxRetryAttempts?: number | undefined;
}

/** A validated, normalised gRFC A6 `retryPolicy` (times in ms). */
export interface GrpcRetryPolicy {
  /** The attempts per call, first try included, after the cap (`maxRetryAttempts`, default 5). */
  readonly maxAttempts: number;
  /** The value as written in the config (≥ 2; may exceed 5). */
  readonly requestedMaxAttempts: number;
  /** True when `requestedMaxAttempts` was above the cap and was treated as the cap. */
  readonly maxAttemptsCapped: boolean;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly backoffMultiplier: number;
  /** The statuses to retry, canonical names, without duplicates, in the config's order. */
  readonly retryableStatusCodes: readonly GrpcStatusName[];
  /** The backoff built from the fields above (see {@link ParseGrpcServiceConfigOptions.jitter}). */
  readonly backoff: Backoff;
  /** Where it came from, e.g. `methodConfig[1].retryPolicy` or `retryPolicy`. */
  readonly path: string;
}

/** A validated, normalised gRFC A6 `hedgingPolicy` (times in ms). */
export interface GrpcHedgingPolicy {
  /** The attempts per call, first included, after the cap (`maxRetryAttempts`, default 5). */
  readonly maxAttempts: number;
  /** The value as written in the config (≥ 2; may exceed 5). */
  readonly requestedMaxAttempts: number;
  /** True when `requestedMaxAttempts` was above the cap and was treated as the cap. */
  readonly maxAttemptsCapped: boolean;
  /** The delay between hedges, ms (`hedgingDelay`; default 0: every attempt at once, as A6 says). */
  readonly hedgingDelayMs: number;
  /** The statuses that start the next hedge at once, canonical names; any other status ends the call. */
  readonly nonFatalStatusCodes: readonly GrpcStatusName[];
  /** Where it came from, e.g. `methodConfig[1].hedgingPolicy`. */
  readonly path: string;
}

/** The part of a {@link GrpcRetryConfig} to spread into `hedge()` options (`delayMs` and the rest). */
export interface GrpcHedgeOptions {
  maxAttempts: number;
  delayMs: number;
  /** True for an error whose gRPC status is one of `nonFatalStatusCodes`. */
  retryable: (error: unknown) => boolean;
  /** The throttle shared by every call that spreads these options; absent without `retryThrottling` (A6: hedges count against it). */
  budget?: RetryThrottlingBudget | undefined;
}

/** A validated gRFC A6 `retryThrottling` (3 decimal places kept, as gRPC does). */
export interface GrpcRetryThrottling {
  readonly maxTokens: number;
  readonly tokenRatio: number;
}

/** The part of a {@link GrpcRetryConfig} to spread into `retry()` options. */
export interface GrpcRetryOptions {
  /** From the policy; 1 (no retries) when there is no policy. */
  maxAttempts: number;
  backoff: Backoff;
  /** True for an error whose gRPC status (see `grpcStatusOf`) is one of `retryableStatusCodes`. */
  retryable: (error: unknown) => boolean;
  /** The throttle shared by every call that spreads these options; absent without `retryThrottling`. */
  budget?: RetryThrottlingBudget | undefined;
}

/** The result of {@link parseGrpcServiceConfig}. */
export interface GrpcRetryConfig {
  /** The policy picked, or `undefined` if none applies (gRPC then does not retry). */
  readonly retryPolicy: GrpcRetryPolicy | undefined;
  readonly retryThrottling: GrpcRetryThrottling | undefined;
  /** What was accepted but changed or ignored (the maxAttempts cap, hedging, clamped backoffs…). */
  readonly warnings: readonly string[];
  /** The status classification, as in {@link GrpcRetryOptions.retryable}. */
  retryable(error: unknown): boolean;
  /** Makes a new throttle from `retryThrottling` (one per simulated client, or for `keyedBudgets`). */
  readonly createBudget: (() => RetryThrottlingBudget) | undefined;
  /** Options to spread into `retry()`: `{ maxAttempts, backoff, retryable, budget? }`. */
  readonly retryOptions: GrpcRetryOptions;
  /**
   * The hedging policy picked (a method config has a retry policy or a hedging policy, never
   * both), or `undefined`. Without `service`, the first `methodConfig` entry with a `hedgingPolicy`
   * when no entry has a `retryPolicy`.
   */
  readonly hedgingPolicy: GrpcHedgingPolicy | undefined;
  /** With a `hedgingPolicy`: options to spread into `hedge()`, `{ maxAttempts, delayMs, retryable, budget? }` (the same throttle as `retryOptions.budget`). */
  readonly hedgeOptions: GrpcHedgeOptions | undefined;
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function fail(path: string, value: unknown, requirement: string): never {
  throw new InvalidOptionError(OWNER, path, value, requirement);
}

function requireField(o: Json, key: string, path: string): unknown {
  const v = o[key];
  if (v === undefined) {
    // gRPC ignores fields it does not know, so a misspelt one is only noticed as a missing one: name it.
    const near = Object.keys(o).find((k) => k !== key && editDistance(k.toLowerCase(), key.toLowerCase()) <= 2);
    fail(`${path}.${key}`, v, near === undefined ? 'is required' : `is required (the object has "${near}": a misspelling?)`);
  }
  return v;
}

/** Levenshtein distance between two short strings (field names). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length]!;
}

/**
 * A status as a service config may write it (grpc-js's rule): a code 0–16, or a canonical name in
 * any letter case. Unlike `grpcStatusName`, no `-` for `_` (grpc-js rejects `"resource-exhausted"`).
 */
function serviceConfigStatus(value: unknown): GrpcStatusName | undefined {
  // ASCII only: grpc-js's validator upper-cases with Unicode rules ("unavaılable", dotless ı, passes)
  // but its runtime compares lower-cased names, so such a status would never match a failure.
  if (typeof value === 'string' && !/^[A-Za-z_]+$/.test(value)) return undefined;
  return grpcStatusName(value);
}

function parseHedgingPolicy(raw: unknown, path: string, { cap, warnings }: ParseContext): GrpcHedgingPolicy {
  if (!isObject(raw)) fail(path, raw, 'must be an object');
  const requested = raw.maxAttempts;
  if (typeof requested !== 'number' || !Number.isInteger(requested) || requested < 2) {
    fail(`${path}.maxAttempts`, requested, 'must be an integer ≥ 2');
  }
  const capped = requested > cap;
  if (capped) warnings.push(`${path}.maxAttempts: ${requested} is treated as ${cap} (gRFC A6's client-side maximum, maxRetryAttempts)`);
  let hedgingDelayMs = raw.hedgingDelay === undefined ? 0 : grpcDurationMs(raw.hedgingDelay, `${path}.hedgingDelay`, OWNER);
  if (hedgingDelayMs > MAX_DELAY_MS) {
    warnings.push(`${path}.hedgingDelay: held to ${MAX_DELAY_MS} ms, the longest timer`);
    hedgingDelayMs = MAX_DELAY_MS;
  }
  const codes = raw.nonFatalStatusCodes;
  const names: GrpcStatusName[] = [];
  // grpc-js checks the entries of an array and ignores anything else here.
  if (Array.isArray(codes)) {
    codes.forEach((code: unknown, i) => {
      const name = serviceConfigStatus(code);
      if (name === undefined) {
        fail(`${path}.nonFatalStatusCodes[${i}]`, code, 'must be a gRPC status name (ASCII letters, e.g. "UNAVAILABLE", any case) or code 0–16');
      }
      if (!names.includes(name)) names.push(name);
    });
  }
  return { maxAttempts: capped ? cap : requested, requestedMaxAttempts: requested, maxAttemptsCapped: capped, hedgingDelayMs, nonFatalStatusCodes: names, path };
}

const DURATION_TEXT = /^\d+(?:\.\d{1,9})?s$/;

/** The other method-config fields, type-checked as grpc-js checks them (herdless does not use them). */
function checkMethodFields(entry: Json, path: string): void {
  if (entry.waitForReady !== undefined && typeof entry.waitForReady !== 'boolean') fail(`${path}.waitForReady`, entry.waitForReady, 'must be a boolean');
  const timeout = entry.timeout;
  if (timeout !== undefined) {
    if (typeof timeout === 'string') {
      if (!DURATION_TEXT.test(timeout)) fail(`${path}.timeout`, timeout, 'must be a duration string like "1.5s"');
    } else if (isObject(timeout)) {
      if (typeof timeout.seconds !== 'number') fail(`${path}.timeout.seconds`, timeout.seconds, 'must be a number');
      if (typeof timeout.nanos !== 'number') fail(`${path}.timeout.nanos`, timeout.nanos, 'must be a number');
    } else {
      fail(`${path}.timeout`, timeout, 'must be a duration string like "1.5s" or { seconds, nanos }');
    }
  }
  for (const key of ['maxRequestBytes', 'maxResponseBytes'] as const) {
    if (entry[key] !== undefined && typeof entry[key] !== 'number') fail(`${path}.${key}`, entry[key], 'must be a number');
  }
}

/** The load-balancing fields of a service config, type-checked as grpc-js checks them. */
function checkLoadBalancing(root: Json): void {
  if (root.loadBalancingPolicy !== undefined && typeof root.loadBalancingPolicy !== 'string') {
    fail('loadBalancingPolicy', root.loadBalancingPolicy, 'must be a string');
  }
  const configs = root.loadBalancingConfig;
  if (configs === undefined) return;
  if (!Array.isArray(configs)) fail('loadBalancingConfig', configs, 'must be an array');
  configs.forEach((config: unknown, i) => {
    if (typeof config !== 'object' || config === null) fail(`loadBalancingConfig[${i}]`, config, 'must be an object');
    if (Object.keys(config).length !== 1) fail(`loadBalancingConfig[${i}]`, config, 'must have exactly one key, the policy name');
  });
}

interface ParseContext {
  readonly jitter: 'proportional' | 'full';
  /** The cap on maxAttempts. */
  readonly cap: number;
  readonly warnings: string[];
}

function parseRetryPolicy(raw: unknown, path: string, { jitter, cap, warnings }: ParseContext): GrpcRetryPolicy {
  if (!isObject(raw)) fail(path, raw, 'must be an object');
  const requested = requireField(raw, 'maxAttempts', path);
  if (typeof requested !== 'number' || !Number.isInteger(requested) || requested < 2) {
    fail(`${path}.maxAttempts`, requested, 'must be an integer ≥ 2');
  }
  const capped = requested > cap;
  if (capped) warnings.push(`${path}.maxAttempts: ${requested} is treated as ${cap} (gRFC A6's client-side maximum, maxRetryAttempts)`);

  const initialBackoffMs = grpcDurationMs(requireField(raw, 'initialBackoff', path), `${path}.initialBackoff`, OWNER);
  if (!(initialBackoffMs > 0)) fail(`${path}.initialBackoff`, raw.initialBackoff, 'must be > 0');
  let maxBackoffMs = grpcDurationMs(requireField(raw, 'maxBackoff', path), `${path}.maxBackoff`, OWNER);
  if (!(maxBackoffMs > 0)) fail(`${path}.maxBackoff`, raw.maxBackoff, 'must be > 0');
  const backoffMultiplier = requireField(raw, 'backoffMultiplier', path);
  if (typeof backoffMultiplier !== 'number' || !Number.isFinite(backoffMultiplier) || !(backoffMultiplier > 0)) {
    fail(`${path}.backoffMultiplier`, backoffMultiplier, 'must be a finite number > 0');
  }

  const codes = requireField(raw, 'retryableStatusCodes', path);
  if (!Array.isArray(codes) || codes.length === 0) fail(`${path}.retryableStatusCodes`, codes, 'must be a non-empty array');
  const names: GrpcStatusName[] = [];
  codes.forEach((code: unknown, i) => {
    const name = serviceConfigStatus(code);
    if (name === undefined) {
      fail(`${path}.retryableStatusCodes[${i}]`, code, 'must be a gRPC status name (ASCII letters, e.g. "UNAVAILABLE", any case) or code 0–16');
    }
    if (!names.includes(name)) names.push(name);
  });

  // Timers cannot wait longer than 2^31 − 1 ms; a longer gRPC backoff is held there.
  if (maxBackoffMs > MAX_DELAY_MS) {
    warnings.push(`${path}.maxBackoff: held to ${MAX_DELAY_MS} ms, the longest timer`);
    maxBackoffMs = MAX_DELAY_MS;
  }
  let startMs = initialBackoffMs;
  if (initialBackoffMs > maxBackoffMs) {
    // gRFC A6's formula, min(initial × m^(n−1), max), and grpc-js accept this. With m ≥ 1 every
    // wait is maxBackoff, so the backoff starts there: A6's policy (grpc-js alone waits
    // initialBackoff first). With m < 1 the formula stays at maxBackoff until initial × m^(n−1)
    // drops below it; herdless's backoffs never start above their cap (they are exponential
    // BackoffSpecs the lab rebuilds on worker threads), so the waits decay from maxBackoff at once.
    warnings.push(
      backoffMultiplier >= 1
        ? `${path}.initialBackoff: above maxBackoff, so every wait is maxBackoff (gRFC A6's formula; grpc-js waits initialBackoff first)`
        : `${path}.initialBackoff: above maxBackoff with backoffMultiplier < 1; the waits decay from maxBackoff at once`,
    );
    startMs = maxBackoffMs;
  }
  const shape = { initialBackoffMs: startMs, maxBackoffMs, backoffMultiplier };
  return {
    maxAttempts: capped ? cap : requested,
    requestedMaxAttempts: requested,
    maxAttemptsCapped: capped,
    initialBackoffMs,
    maxBackoffMs,
    backoffMultiplier,
    retryableStatusCodes: names,
    backoff: jitter === 'full' ? fullJitterBackoff(shape) : proportionalJitterBackoff({ ...shape, jitter: 0.2 }),
    path,
  };
}

function parseThrottling(raw: unknown, path: string): GrpcRetryThrottling {
  if (!isObject(raw)) fail(path, raw, 'must be an object');
  const maxTokens = requireField(raw, 'maxTokens', path);
  const tokenRatio = requireField(raw, 'tokenRatio', path);
  try {
    const probe = retryThrottlingBudget({ maxTokens: maxTokens as number, tokenRatio: tokenRatio as number });
    return { maxTokens: probe.maxTokens, tokenRatio: probe.tokenRatio };
  } catch (error) {
    if (error instanceof InvalidOptionError) fail(`${path}.${error.field}`, error.value, error.requirement);
    throw error;
  }
}

interface MethodEntry {
  index: number;
  names: { service: string; method: string }[];
  policy: GrpcRetryPolicy | undefined;
  hedging: GrpcHedgingPolicy | undefined;
}

function parseName(n: unknown, p: string): { service: string; method: string } {
  // grpc-js's rule: a service that is set and not "" must be a string; so must a method beside it;
  // without a service, no method may be set at all (not even "").
  if (typeof n !== 'object' || n === null) fail(p, n, 'must be an object');
  const o = n as Json;
  if ('service' in o && o.service !== '') {
    if (typeof o.service !== 'string') fail(`${p}.service`, o.service, 'must be a string');
    if ('method' in o && o.method !== '') {
      if (typeof o.method !== 'string') fail(`${p}.method`, o.method, 'must be a string');
      return { service: o.service, method: o.method };
    }
    return { service: o.service, method: '' };
  }
  if ('method' in o && o.method !== undefined) fail(`${p}.method`, o.method, 'needs a service (a name without one must not set method)');
  return { service: '', method: '' };
}

function parseMethodConfigs(raw: unknown, context: ParseContext): MethodEntry[] {
  if (!Array.isArray(raw)) fail('methodConfig', raw, 'must be an array');
  const seen = new Set<string>();
  return raw.map((entry: unknown, index): MethodEntry => {
    const path = `methodConfig[${index}]`;
    if (!isObject(entry)) fail(path, entry, 'must be an object');
    if (!Array.isArray(entry.name)) fail(`${path}.name`, entry.name, 'must be an array (use [{}] for the default entry)');
    const names = entry.name.map((n: unknown, j) => {
      const p = `${path}.name[${j}]`;
      const name = parseName(n, p);
      const key = `${name.service}/${name.method}`;
      if (seen.has(key)) fail(p, key, 'is named twice in methodConfig');
      seen.add(key);
      return name;
    });
    checkMethodFields(entry, path);
    let hedging: GrpcHedgingPolicy | undefined;
    if ('hedgingPolicy' in entry) {
      // gRFC A6: a method config has a retry policy or a hedging policy, never both.
      if ('retryPolicy' in entry) fail(`${path}.hedgingPolicy`, entry.hedgingPolicy, 'cannot be set with retryPolicy');
      hedging = parseHedgingPolicy(entry.hedgingPolicy, `${path}.hedgingPolicy`, context);
    }
    const policy = 'retryPolicy' in entry ? parseRetryPolicy(entry.retryPolicy, `${path}.retryPolicy`, context) : undefined;
    return { index, names, policy, hedging };
  });
}

function pick(entries: MethodEntry[], service: string | undefined, method: string | undefined, warnings: string[]): Pick<MethodEntry, 'policy' | 'hedging'> {
  if (service === undefined) {
    const withPolicy = entries.filter((e) => e.policy !== undefined);
    if (withPolicy.length > 1) {
      warnings.push(`${withPolicy.length} methodConfig entries have a retryPolicy; using ${withPolicy[0]!.policy!.path} (pass service and method to choose)`);
    }
    if (withPolicy.length > 0) return { policy: withPolicy[0]!.policy, hedging: undefined };
    return { policy: undefined, hedging: entries.find((e) => e.hedging !== undefined)?.hedging };
  }
  const find = (s: string, m: string): MethodEntry | undefined => entries.find((e) => e.names.some((n) => n.service === s && n.method === m));
  const found = (method !== undefined && method !== '' ? find(service, method) : undefined) ?? find(service, '') ?? find('', '');
  return { policy: found?.policy, hedging: found?.hedging };
}

const POLICY_FIELDS = ['maxAttempts', 'initialBackoff', 'maxBackoff', 'backoffMultiplier', 'retryableStatusCodes'];

/**
 * Reads a gRPC service config (gRFC A6, "gRPC Retry Design") into herdless options. Three shapes
 * are accepted, as an object or as JSON text:
 * - a full service config: `{ "methodConfig": [{ "name": [...], "retryPolicy": {...} }], "retryThrottling": {...} }`;
 * - a shorthand without method names: `{ "retryPolicy": {...}, "retryThrottling": {...} }`;
 * - a bare retry policy: `{ "maxAttempts": 4, "initialBackoff": "0.1s", ... }`.
 *
 * Every `retryPolicy` in the input is validated — as gRPC rejects a whole service config for one
 * bad entry — and one is picked (see {@link ParseGrpcServiceConfigOptions.service}). It accepts
 * and rejects what grpc-js 1.14 does (a test runs grpc-js's validator over a table of configs), but
 * for the deviations docs/grpc.md lists. The rules: all five retry-policy fields are required;
 * `maxAttempts` an integer ≥ 2, values above 5 (or `maxRetryAttempts`) treated as 5 (gRFC A6;
 * `maxAttemptsCapped`, and a warning); `initialBackoff` and `maxBackoff` durations like `"0.1s"`,
 * > 0 (A6); an `initialBackoff` above `maxBackoff` is accepted (A6's formula caps every wait);
 * `backoffMultiplier` a finite number > 0; `retryableStatusCodes` a non-empty array of status names
 * (ASCII letters in any case, as grpc-js) or codes 0–16; `retryThrottling.maxTokens` in (0, 1000] and `tokenRatio` > 0, both
 * truncated to 3 decimal places. Each `methodConfig` entry needs a `name` array; a name's `service`
 * and `method` are strings, and a name without a service sets no method; no name twice. A
 * `hedgingPolicy` is validated (`maxAttempts` ≥ 2, capped as a retry policy's; `hedgingDelay` a
 * duration, default 0; `nonFatalStatusCodes` statuses), an error next to a `retryPolicy`, and
 * returned as `hedgingPolicy`, with `hedgeOptions` to spread into `hedge()`. `waitForReady`, `timeout`, `maxRequestBytes`, `maxResponseBytes`,
 * `loadBalancingPolicy` and `loadBalancingConfig` are type-checked as grpc-js checks them, then
 * ignored.
 *
 * The result's `retryOptions` spread into `retry()`: `maxAttempts`, the backoff (gRPC's ±20% jitter
 * by default), a `retryable` predicate that reads the gRPC status of an error (`error.grpcCode` or
 * `error.code`: see `grpcStatusOf`), and — with `retryThrottling` — one throttle budget shared by
 * every call that uses these options (gRPC keeps one per server name; use `createBudget` with
 * `keyedBudgets` for one per target, or one per simulated client).
 *
 * @throws InvalidOptionError whose `field` is the JSON path of the bad value, e.g.
 *   `methodConfig[0].retryPolicy.maxAttempts` or `retryThrottling.tokenRatio`; for an unknown
 *   key in `options` (e.g. `servise`), that key.
 * @example
 * ```ts
 * const grpc = parseGrpcServiceConfig({
 *   methodConfig: [{ name: [{ service: 'helloworld.Greeter' }], retryPolicy: {
 *     maxAttempts: 4, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2,
 *     retryableStatusCodes: ['UNAVAILABLE'] } }],
 *   retryThrottling: { maxTokens: 10, tokenRatio: 0.1 },
 * });
 * await retry(() => client.sayHello(request), { ...grpc.retryOptions, signal });
 * ```
 */
export function parseGrpcServiceConfig(input: unknown, options?: ParseGrpcServiceConfigOptions): GrpcRetryConfig {
  const o = objectOption(OWNER, 'options', options, ['service', 'method', 'jitter', 'maxRetryAttempts']);
  const jitter = o.jitter ?? 'proportional';
  if (jitter !== 'proportional' && jitter !== 'full') fail('options.jitter', jitter, 'must be "proportional" or "full"');
  if (o.service !== undefined && typeof o.service !== 'string') fail('options.service', o.service, 'must be a string');
  if (o.method !== undefined && typeof o.method !== 'string') fail('options.method', o.method, 'must be a string');
  if (o.method !== undefined && o.service === undefined) fail('options.method', o.method, 'needs options.service');
  const cap = numberOption(OWNER, 'options.maxRetryAttempts', o.maxRetryAttempts, GRPC_MAX_ATTEMPTS_CAP, MAX_RETRY_ATTEMPTS_RULE);

  let root = input;
  if (typeof input === 'string') {
    try {
      root = JSON.parse(input) as unknown;
    } catch (error) {
      fail('serviceConfig', input, `must be valid JSON (${(error as Error).message})`);
    }
  }
  if (!isObject(root)) fail('serviceConfig', root, 'must be an object');

  const warnings: string[] = [];
  const context: ParseContext = { jitter, cap, warnings };
  let retryPolicy: GrpcRetryPolicy | undefined;
  let hedgingPolicy: GrpcHedgingPolicy | undefined;
  let retryThrottling: GrpcRetryThrottling | undefined;
  if (POLICY_FIELDS.some((f) => f in root)) {
    retryPolicy = parseRetryPolicy(root, 'retryPolicy', context);
  } else {
    if (root.retryPolicy !== undefined && root.methodConfig !== undefined) {
      fail('retryPolicy', root.retryPolicy, 'must be inside methodConfig[] when methodConfig is given');
    }
    if (root.retryPolicy !== undefined) {
      retryPolicy = parseRetryPolicy(root.retryPolicy, 'retryPolicy', context);
    } else if (root.methodConfig !== undefined) {
      ({ policy: retryPolicy, hedging: hedgingPolicy } = pick(parseMethodConfigs(root.methodConfig, context), o.service, o.method, warnings));
    }
    if (root.retryThrottling !== undefined) retryThrottling = parseThrottling(root.retryThrottling, 'retryThrottling');
    checkLoadBalancing(root);
  }

  const codes = new Set<GrpcStatusName>(retryPolicy?.retryableStatusCodes ?? []);
  const retryable = (error: unknown): boolean => {
    const status = grpcStatusOf(error);
    return status !== undefined && codes.has(status);
  };
  const t = retryThrottling;
  const createBudget = t === undefined ? undefined : () => retryThrottlingBudget({ maxTokens: t.maxTokens, tokenRatio: t.tokenRatio });
  const retryOptions: GrpcRetryOptions = {
    maxAttempts: retryPolicy?.maxAttempts ?? 1,
    backoff: retryPolicy?.backoff ?? proportionalJitterBackoff(),
    retryable,
  };
  if (createBudget !== undefined) retryOptions.budget = createBudget();
  let hedgeOptions: GrpcHedgeOptions | undefined;
  if (hedgingPolicy !== undefined) {
    const nonFatal = new Set<GrpcStatusName>(hedgingPolicy.nonFatalStatusCodes);
    hedgeOptions = {
      maxAttempts: hedgingPolicy.maxAttempts,
      delayMs: hedgingPolicy.hedgingDelayMs,
      retryable: (error: unknown): boolean => {
        const status = grpcStatusOf(error);
        return status !== undefined && nonFatal.has(status);
      },
    };
    if (retryOptions.budget !== undefined) hedgeOptions.budget = retryOptions.budget;
  }
  return { retryPolicy, retryThrottling, warnings, retryable, createBudget, retryOptions, hedgingPolicy, hedgeOptions };
}
