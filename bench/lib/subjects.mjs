// What is measured: the same successful (or once-failing) operation through each library, set up
// as its README suggests, with a 0 ms wait where a retry happens. Every subject is built once; the
// measured function is one call.
import { retry as cockatielRetry, circuitBreaker as cockatielBreaker, handleAll, ConsecutiveBreaker, ConstantBackoff } from 'cockatiel';
import pRetry from 'p-retry';
import CircuitBreakerOpossum from 'opossum';
import { circuitBreaker, constantBackoff, createRetry, retry, systemRandom, systemScheduler } from '../../packages/herdless/dist/index.js';
import { otelTelemetry } from '../../packages/herdless/dist/otel/index.js';

/** The operation: an async function that succeeds. `await op()` is the "bare" baseline. */
export async function op() {
  return 1;
}

/**
 * Every retry() option that does not change how the call runs: policy, ports and hooks. Left out:
 * `deadlineMs` / `attemptTimeoutMs` (they add a timer per call, a different path), `budget` (its
 * bookkeeping is work, measured in the decisions section) and `signal` (per call).
 */
export const fullOptions = {
  maxAttempts: 3,
  backoff: constantBackoff({ delayMs: 0 }),
  retryable: () => undefined,
  maxRetryAfterMs: 60_000,
  random: systemRandom,
  clock: systemScheduler,
  unref: false,
  onRetry: () => {},
  onGiveUp: () => {},
  onHookError: () => {},
};

/** An error every library retries (herdless: a transient network code). */
export function transientError() {
  return Object.assign(new Error('connection reset'), { code: 'ECONNRESET' });
}

// One error for every failing attempt: making a fresh Error (its stack trace) costs microseconds
// on this machine, more than any library's own work, and would only blur the comparison.
const sharedError = transientError();

/** A fresh operation that fails its first attempt (a rejected promise) and succeeds on the second. */
export function failsOnce() {
  let first = true;
  return () => {
    if (first) {
      first = false;
      return Promise.reject(sharedError);
    }
    return Promise.resolve(1);
  };
}

const zero = { maxAttempts: 3, backoff: constantBackoff({ delayMs: 0 }) };

function onRejected(error) {
  throw error;
}

/** The success-path subjects: name → (operation) => Promise. */
export function successSubjects() {
  const retrier = createRetry(fullOptions);
  // The OpenTelemetry adapter with no provider registered (the API's no-op): it reports itself
  // disabled, so the layers skip it — the figure to hold against retry(op).
  const quietOtel = { telemetry: otelTelemetry() };
  const otelRetrier = createRetry(quietOtel);
  const cockatiel = cockatielRetry(handleAll, { maxAttempts: 2, backoff: new ConstantBackoff(0) });
  return {
    'bare await op()': (f) => f(),
    // The least any promise-returning wrapper can do: one derived promise, no state, no checks.
    'floor: op().then(undefined, shared fn)': (f) => f().then(undefined, onRejected),
    'herdless retry(op)': (f) => retry(f),
    'herdless retry(op, options)': (f) => retry(f, fullOptions),
    'herdless createRetry(options)(op)': (f) => retrier(f),
    'herdless retry(op, { …literal })': (f) => retry(f, { maxAttempts: 3, backoff: zero.backoff }),
    'herdless retry(op, { telemetry: otel }), no OTel provider': (f) => retry(f, quietOtel),
    'herdless createRetry({ telemetry: otel })(op), no OTel provider': (f) => otelRetrier(f),
    'cockatiel 3 retry().execute(op)': (f) => cockatiel.execute(f),
    'p-retry 7 pRetry(op, { retries: 2 })': (f) => pRetry(f, { retries: 2 }),
  };
}

/** The breakers' async shells, one successful call (cockatiel's built as in section 4). */
export function breakerSubjects() {
  const ours = circuitBreaker();
  const theirs = cockatielBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) });
  return {
    'herdless circuitBreaker().execute(op)': (f) => ours.execute(f),
    'cockatiel 3 circuitBreaker().execute(op)': (f) => theirs.execute(f),
  };
}

/** The 0 ms retry subjects: each retries a failed first attempt after a 0 ms wait. */
export function zeroRetrySubjects() {
  const retrier = createRetry(zero);
  const cockatiel = cockatielRetry(handleAll, { maxAttempts: 2, backoff: new ConstantBackoff(0) });
  return {
    'herdless retry(op, options)': (f) => retry(f, zero),
    'herdless createRetry(options)(op)': (f) => retrier(f),
    'cockatiel 3 (ConstantBackoff(0))': (f) => cockatiel.execute(f),
    'p-retry 7 (minTimeout: 0)': (f) => pRetry(f, { retries: 2, minTimeout: 0 }),
  };
}

/** Heap subjects, by a short key (the child process builds one): key → () => (op) => Promise. */
export const heapSubjects = {
  bare: () => (f) => f(),
  'herdless-retry': () => (f) => retry(f),
  'herdless-retry-options': () => (f) => retry(f, fullOptions),
  'herdless-createRetry': () => {
    const r = createRetry(fullOptions);
    return (f) => r(f);
  },
  'herdless-breaker': () => {
    const b = circuitBreaker();
    return (f) => b.execute(f);
  },
  cockatiel: () => {
    const p = cockatielRetry(handleAll, { maxAttempts: 2, backoff: new ConstantBackoff(0) });
    return (f) => p.execute(f);
  },
  'p-retry': () => (f) => pRetry(f, { retries: 2 }),
  opossum: () => {
    const b = new CircuitBreakerOpossum(op);
    const fire = (_f) => b.fire();
    fire.close = () => b.shutdown();
    return fire;
  },
};

/** Labels for the heap table. */
export const heapLabels = {
  bare: 'bare await op()',
  'herdless-retry': 'herdless retry(op)',
  'herdless-retry-options': 'herdless retry(op, options)',
  'herdless-createRetry': 'herdless createRetry(options)(op)',
  'herdless-breaker': 'herdless circuitBreaker().execute(op)',
  cockatiel: 'cockatiel 3 retry().execute(op)',
  'p-retry': 'p-retry 7 pRetry(op, { retries: 2 })',
  opossum: 'opossum 9 new CircuitBreaker(op).fire() (defaults)',
};
