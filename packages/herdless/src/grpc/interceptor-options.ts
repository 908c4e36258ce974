import type { Backoff } from '../core/backoff/backoff.js';
import type { RetryBudget } from '../core/budget/budget.js';
import { throttleOption, type AttemptThrottle } from '../core/budget/adaptive-throttling.js';
import { InvalidOptionError, isInvalidOptionError } from '../core/errors.js';
import type { GiveUpReason } from '../core/retry/errors.js';
import { parseRetryPolicy, type RetryPolicy } from '../core/retry/policy.js';
import type { Rng } from '../core/rng.js';
import { numberOption, objectOption } from '../core/validate.js';
import type { HookName } from '../runtime/hooks.js';
import { systemScheduler, type Scheduler } from '../runtime/scheduler.js';
import { systemRandom } from '../runtime/system-random.js';
import { nameOption } from '../runtime/retry-options.js';
import { telemetryOption, type TelemetryObserver } from '../runtime/telemetry.js';
import type { CircuitBreaker } from '../runtime/breaker.js';
import { breakerOption, type BreakerLookup, type KeyedBreakers } from '../runtime/keyed-breakers.js';
import { GRPC_MAX_ATTEMPTS_CAP, MAX_RETRY_ATTEMPTS_RULE, parseGrpcServiceConfig, type GrpcHedgingPolicy, type GrpcRetryConfig } from './service-config.js';
import { DEFAULT_PER_RPC_BUFFER_LIMIT, DEFAULT_RETRY_BUFFER_SIZE, RetryBufferPool } from './retry-buffer.js';
import { GRPC_STATUS_CODES, grpcStatusName, type GrpcStatusName } from './status.js';
import { grpcThrottleFor } from './throttles.js';

/** What `onRetry` hears before each retry's wait. */
export interface GrpcRetryEvent {
  /** The method's path, e.g. `/helloworld.Greeter/SayHello`. */
  readonly method: string;
  /** The attempt that failed, from 1. */
  readonly attempt: number;
  /** Its status code (gRPC numbering, as `GRPC_STATUS_CODES`). */
  readonly code: number;
  /** The wait before the next attempt, in ms. */
  readonly delayMs: number;
  /** Where the wait came from: `'pushback'` (the server's `grpc-retry-pushback-ms`, gRFC A6) or `'backoff'`. */
  readonly delaySource: 'backoff' | 'pushback';
}

/** What `onGiveUp` hears when a failed attempt is the call's last. */
export interface GrpcGiveUpEvent {
  /** The method's path. */
  readonly method: string;
  /** The attempts made. */
  readonly attempts: number;
  /** The last attempt's status code. */
  readonly code: number;
  /**
   * Why no retry followed: `'fatal'` (a status not in the retryable list), `'exhausted'`,
   * `'budget'`… or `'committed'`: gRFC A6's commit rule (the response had begun, or the request
   * outgrew the retry buffer; `message` says which).
   */
  readonly reason: GiveUpReason | 'committed';
  /** A human sentence, e.g. `all 4 attempts failed (maxAttempts 4)`. */
  readonly message: string;
  /**
   * `true` for a call hedged by its method's `hedgingPolicy` (absent for a retried call). `attempts`
   * then counts the first attempt and its hedges; `reason` is `'exhausted'`, `'fatal'`, `'budget'`,
   * `'throttled'`, `'do-not-retry'`, `'hint-too-long'` or `'circuit-open'` when no attempt committed (`message` is the `HedgeError`'s),
   * `'committed'` when the attempt that committed ended with a status other than OK, `'aborted'`
   * when the caller cancelled.
   */
  readonly hedged?: true;
}

/**
 * What `onHedge` hears when a hedged call (its method's `hedgingPolicy`, gRFC A6) sends a hedge.
 * @example
 * ```ts
 * onHedge: ({ method, attempt, trigger, code }: GrpcHedgeEvent) => log.debug({ method, attempt, trigger, code }, 'hedged');
 * ```
 */
export interface GrpcHedgeEvent {
  /** The method's path. */
  readonly method: string;
  /** The hedge's attempt number, from 2 (the first attempt is 1). */
  readonly attempt: number;
  /**
   * Why it was sent: `'delay'` — no attempt had committed `hedgingDelay` after the previous one was
   * sent; `'failure'` — an attempt ended with a status in `nonFatalStatusCodes` (the hedge goes at
   * once, or after the server's pushback).
   */
  readonly trigger: 'delay' | 'failure';
  /** When it was sent, in ms after the call's first attempt. */
  readonly afterMs: number;
  /** For `'failure'`: the non-fatal status code that started it. */
  readonly code?: number;
}

/**
 * Options of the herdless gRPC interceptors (`herdless/grpc` for grpc-js, `herdless/connect` for
 * Connect). Give either a gRPC service config (`serviceConfig`, applied per method as its
 * `methodConfig` names) or a herdless policy (`maxAttempts`, `backoff`, `retryableStatusCodes`,
 * `budget`), not both.
 */
export interface GrpcRetryInterceptorOptions {
  /**
   * A gRPC service config (object or JSON text; see `parseGrpcServiceConfig`). Each call uses the
   * `retryPolicy` of the `methodConfig` entry that names its method (else its service, else the
   * default entry); a method without one is not retried. Its `retryThrottling` is one token bucket
   * per server name, shared by every interceptor and channel in the process (gRFC A6).
   */
  serviceConfig?: unknown;
  /** With `serviceConfig`: `'proportional'` (default, gRPC's ±20%) or `'full'` jitter. */
  jitter?: 'proportional' | 'full' | undefined;
  /**
   * With `serviceConfig`: the most attempts a service config's `maxAttempts` may ask for; a larger
   * value is treated as this one. Default 5, gRFC A6's client-side maximum ("can be changed by the
   * client through the use of channel arguments"); grpc-java names the option `maxRetryAttempts`,
   * grpc-js `grpc-node.retry_max_attempts_limit`. Raise it only for a server you trust: the cap
   * exists because a service config can come from DNS. An integer ≥ 1.
   */
  maxRetryAttempts?: number | undefined;
  /**
   * The most bytes one call may hold for replay (its serialized request messages), gRFC A6's
   * per-RPC buffer limit. A call whose request outgrows it is committed: the attempt in flight goes
   * on, and no retry follows. Default 1 MiB (1 048 576), as grpc-js's
   * `grpc.per_rpc_retry_buffer_size` and grpc-java's `perRpcBufferLimit`. An integer ≥ 0.
   */
  perRpcBufferLimit?: number | undefined;
  /**
   * The most bytes all calls of this interceptor may hold for replay at once, gRFC A6's
   * per-channel limit: a call that does not fit is committed as above. Default 16 MiB
   * (16 777 216), as grpc-js's `grpc.retry_buffer_size` and grpc-java's `retryBufferSize`. One
   * interceptor per channel (or transport) gives grpc-js's per-channel accounting. An integer ≥ 0.
   */
  retryBufferSize?: number | undefined;
  /** Herdless policy: attempts in all, the first included. Default 3. */
  maxAttempts?: number | undefined;
  /** Herdless policy: the backoff. Default herdless's `DEFAULT_BACKOFF` (full jitter, 100 ms × 2^n, cap 10 s). */
  backoff?: Backoff | undefined;
  /** Herdless policy: the statuses to retry, names (`'UNAVAILABLE'`) or codes. Default `['UNAVAILABLE']`. */
  retryableStatusCodes?: readonly (GrpcStatusName | number)[] | undefined;
  /** Herdless policy: a retry budget shared by the calls that use it. Default: none. */
  budget?: RetryBudget | undefined;
  /**
   * The longest pushback honoured, in ms; a longer one ends the call with its status (reason
   * `'hint-too-long'`). Default 60 000. Range [0, 2^31 − 1].
   */
  maxRetryAfterMs?: number | undefined;
  /**
   * Client-side adaptive throttling (`adaptiveThrottling()`), shared by the calls that use it and
   * asked before every attempt, the first included — of a retried call, and of a hedged call (each
   * hedge is asked after its `retryThrottling` bucket admitted it). A refused first try ends the
   * call with UNAVAILABLE ("adaptive throttling rejected the call locally") without sending it; a
   * refused retry ends it with the last attempt's status; a refused hedge is not sent and no more
   * follow, while the attempts in flight go on (if they all fail, the last status is the call's;
   * give-up reason `'throttled'`). OK and statuses that say nothing about load
   * count as accepts; UNAVAILABLE, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED and the retryable
   * statuses as rejections. Works with a service config too. Default: none.
   */
  throttle?: AttemptThrottle | undefined;
  /** The clock and timers, as `retry()`'s `clock`. Default `systemScheduler`; tests may pass a `ManualClock`. */
  clock?: Scheduler | undefined;
  /** The jitter's uniform source. Default `systemRandom`. */
  random?: Rng | undefined;
  /** Called before each retry's wait (retried calls only: see `onHedge`). A throw is reported (`onHookError`), never fails the call. */
  onRetry?: ((event: GrpcRetryEvent) => unknown) | undefined;
  /**
   * Called when a failed attempt ends the call, retried or hedged (a hedged call's event has
   * `hedged: true`). A throw is reported (`onHookError`), never fails the call.
   */
  onGiveUp?: ((event: GrpcGiveUpEvent) => unknown) | undefined;
  /**
   * Called when a hedged call (a method with a `hedgingPolicy`) sends a hedge: which attempt, why
   * (`'delay'` or `'failure'`, with the non-fatal status), when. A hedge is not a retry — it may go
   * while earlier attempts are still running, and waits out no backoff — so hedged calls never call
   * `onRetry`. A throw is reported (`onHookError`), never fails the call.
   */
  onHedge?: ((event: GrpcHedgeEvent) => unknown) | undefined;
  /** Where a throwing hook is reported. Default: a process warning (or the console). */
  onHookError?: ((error: unknown, hook: HookName) => void) | undefined;
  /**
   * Receives each call's events as the `'grpc'` layer: attempt start and end (`status` is the gRPC
   * status code), retry (`delaySource` `'pushback'` when the server's `grpc-retry-pushback-ms` set
   * the wait), give-up, budget refusal. See `TelemetryObserver`; `herdless/otel` records them.
   * Default: none.
   */
  telemetry?: TelemetryObserver | undefined;
  /**
   * A circuit breaker every attempt goes through, retried or hedged: a `CircuitBreaker`, or `keyedBreakers()` for one
   * breaker per server name (the request URL's host for Connect, `target` for grpc-js), so that
   * one failing server opens only its own. A status the breaker's `isFailure` counts (by default
   * UNAVAILABLE) is a failure, OK and other statuses a success, the caller's cancellation nothing.
   * A refused attempt is not sent: the call ends at once with UNAVAILABLE (give-up reason
   * `'circuit-open'`), never retried by this interceptor. Default: none.
   */
  breaker?: CircuitBreaker | KeyedBreakers | undefined;
  /**
   * The dependency the calls go to, on every telemetry event (`TelemetryCall.name`,
   * `herdless.name` in `herdless/otel`). Default: each method's service (`helloworld.Greeter`).
   * 1–128 characters, no control characters.
   */
  name?: string | undefined;
}

const POLICY_KEYS = ['maxAttempts', 'backoff', 'retryableStatusCodes', 'budget'] as const;
const COMMON_KEYS = ['serviceConfig', 'jitter', 'maxRetryAttempts', ...POLICY_KEYS, 'throttle', 'perRpcBufferLimit', 'retryBufferSize', 'maxRetryAfterMs', 'clock', 'random', 'onRetry', 'onGiveUp', 'onHedge', 'onHookError', 'telemetry', 'breaker', 'name'];

/** @internal One method's retry rules, resolved from the options. */
export interface GrpcMethodPlan {
  readonly policy: RetryPolicy;
  /** Retryable status codes (numbers). */
  readonly codes: ReadonlySet<number>;
  /**
   * The method's hedging policy from the service config (gRFC A6: a method has a retry policy or a
   * hedging policy), hedged under the same throttle as `policy.budget`; absent when it has none.
   */
  readonly hedging?: { readonly policy: GrpcHedgingPolicy; readonly nonFatal: ReadonlySet<number> } | undefined;
}

/** @internal The options, validated once, and a per-method, per-server resolver. */
export interface GrpcRetryPlanner {
  readonly clock: Scheduler;
  /** The `name` option: telemetry's dependency name (default: each method's service). */
  readonly name: string | undefined;
  readonly random: Rng;
  readonly options: GrpcRetryInterceptorOptions;
  /** The telemetry observer, if any (a disabled one is none). */
  readonly telemetry: TelemetryObserver | undefined;
  /** `'grpc-js'` or `'connect'`: the telemetry call's `client`. */
  readonly client: string;
  /** The adaptive throttle, if any. */
  readonly throttle: AttemptThrottle | undefined;
  /** True when the service config asks for throttling (it then needs the server's name). */
  readonly throttled: boolean;
  /** The bytes held for replay by this interceptor's calls. */
  readonly buffers: RetryBufferPool;
  /** The `breaker` option, when given. */
  readonly breaker: BreakerLookup | undefined;
  /** The plan for `path` (`/service/method`) on `serverName`. */
  planFor(path: string, serverName: string | undefined): GrpcMethodPlan;
}

const NO_RETRY_CODES: ReadonlySet<number> = /* @__PURE__ */ new Set();
const MAX_PLANS = 1000;

function isFunctionOrUndefined(v: unknown): boolean {
  return v === undefined || typeof v === 'function';
}

/**
 * @internal Validates the interceptors' options once (an `InvalidOptionError` names the field, for
 * a service config its JSON path under `serviceConfig.`, and the value) and returns the resolver.
 */
export function grpcRetryPlanner(
  owner: string,
  options: GrpcRetryInterceptorOptions | undefined,
  extraKeys: readonly string[] = [],
  client = 'grpc-js',
): GrpcRetryPlanner {
  const o = objectOption(owner, 'options', options, [...COMMON_KEYS, ...extraKeys]);
  for (const hook of ['onRetry', 'onGiveUp', 'onHedge', 'onHookError'] as const) {
    if (!isFunctionOrUndefined(o[hook])) throw new InvalidOptionError(owner, hook, o[hook], 'must be a function');
  }
  const clock = o.clock ?? systemScheduler;
  if (typeof clock !== 'object' || clock === null || typeof clock.setTimeout !== 'function' || typeof clock.now !== 'function') {
    throw new InvalidOptionError(owner, 'clock', clock, 'must be a Scheduler (now, setTimeout, clearTimeout)');
  }
  const random = o.random ?? systemRandom;
  if (typeof random !== 'object' || random === null || typeof random.random !== 'function') {
    throw new InvalidOptionError(owner, 'random', random, 'must be an Rng ({ random(): number })');
  }
  const throttle = throttleOption(owner, 'throttle', o.throttle);
  const byteRule = { min: 0, max: Number.MAX_SAFE_INTEGER, integer: true };
  const buffers = new RetryBufferPool(
    numberOption(owner, 'retryBufferSize', o.retryBufferSize, DEFAULT_RETRY_BUFFER_SIZE, byteRule),
    numberOption(owner, 'perRpcBufferLimit', o.perRpcBufferLimit, DEFAULT_PER_RPC_BUFFER_LIMIT, byteRule),
  );
  const common = { clock, random, name: nameOption(owner, o.name), options: o as GrpcRetryInterceptorOptions, telemetry: telemetryOption(owner, o.telemetry), client, throttle, buffers, breaker: breakerOption(owner, o.breaker) };

  if (o.serviceConfig !== undefined) {
    const clash = POLICY_KEYS.find((k) => o[k] !== undefined);
    if (clash !== undefined) throw new InvalidOptionError(owner, clash, o[clash], 'cannot be given with serviceConfig (the service config sets it)');
    const jitter = o.jitter;
    // Checked here, so that the error names this option rather than a service config path.
    const maxRetryAttempts = numberOption(owner, 'maxRetryAttempts', o.maxRetryAttempts, GRPC_MAX_ATTEMPTS_CAP, MAX_RETRY_ATTEMPTS_RULE);
    const parse = (service?: string, method?: string): GrpcRetryConfig => {
      try {
        return parseGrpcServiceConfig(o.serviceConfig, { service, method, jitter, maxRetryAttempts });
      } catch (error) {
        if (isInvalidOptionError(error)) throw new InvalidOptionError(owner, `serviceConfig.${error.field}`, error.value, error.requirement);
        throw error;
      }
    };
    const whole = parse(); // validates every entry now, not at the first call
    const plans = new Map<string, GrpcMethodPlan>();
    return {
      ...common,
      throttled: whole.retryThrottling !== undefined,
      planFor(path, serverName) {
        const key = `${serverName ?? ''}\n${path}`;
        let plan = plans.get(key);
        if (plan !== undefined) return plan;
        const [service = '', method = ''] = path.split('/').filter((part) => part.length > 0);
        const config = parse(service, method);
        const rp = config.retryPolicy;
        const budget = whole.retryThrottling !== undefined && serverName !== undefined ? grpcThrottleFor(serverName, whole.retryThrottling) : undefined;
        plan = {
          policy: parseRetryPolicy({ maxAttempts: rp?.maxAttempts ?? 1, backoff: rp?.backoff, maxRetryAfterMs: o.maxRetryAfterMs, budget }, owner),
          codes: rp === undefined ? NO_RETRY_CODES : new Set(rp.retryableStatusCodes.map((name) => GRPC_STATUS_CODES[name])),
          hedging:
            config.hedgingPolicy === undefined
              ? undefined
              : { policy: config.hedgingPolicy, nonFatal: new Set(config.hedgingPolicy.nonFatalStatusCodes.map((name) => GRPC_STATUS_CODES[name])) },
        };
        // Bounded: method paths are few, but a caller could invent them.
        if (plans.size < MAX_PLANS) plans.set(key, plan);
        return plan;
      },
    };
  }
  if (o.jitter !== undefined) throw new InvalidOptionError(owner, 'jitter', o.jitter, 'applies to serviceConfig only (pass a backoff instead)');
  if (o.maxRetryAttempts !== undefined) {
    throw new InvalidOptionError(owner, 'maxRetryAttempts', o.maxRetryAttempts, 'applies to serviceConfig only (maxAttempts is not capped)');
  }
  const rawCodes = o.retryableStatusCodes ?? ['UNAVAILABLE'];
  if (!Array.isArray(rawCodes) || rawCodes.length === 0) {
    throw new InvalidOptionError(owner, 'retryableStatusCodes', rawCodes, 'must be a non-empty array of gRPC status names or codes');
  }
  const codes = new Set<number>();
  rawCodes.forEach((code: unknown, i) => {
    const name = typeof code === 'number' || (typeof code === 'string' && Object.hasOwn(GRPC_STATUS_CODES, code)) ? grpcStatusName(code) : undefined;
    if (name === undefined || name === 'OK') {
      throw new InvalidOptionError(owner, `retryableStatusCodes[${i}]`, code, 'must be a gRPC status name such as "UNAVAILABLE" or a code 1–16');
    }
    codes.add(GRPC_STATUS_CODES[name]);
  });
  const plan: GrpcMethodPlan = {
    policy: parseRetryPolicy({ maxAttempts: o.maxAttempts, backoff: o.backoff, budget: o.budget, maxRetryAfterMs: o.maxRetryAfterMs }, owner),
    codes,
  };
  return { ...common, throttled: false, planFor: () => plan };
}

