// What is measured: the same successful (or once-failing) operation through each library, set up
// as its README suggests, with a 0 ms wait where a retry happens. Every subject is built once; the
// measured function is one call.
import { retry as cockatielRetry, circuitBreaker as cockatielBreaker, handleAll, ConsecutiveBreaker, ConstantBackoff, ExponentialBackoff, fullJitterGenerator } from 'cockatiel';
import pRetry from 'p-retry';
import CircuitBreakerOpossum from 'opossum';
import { circuitBreaker, constantBackoff, createRetry, fullJitterBackoff, retry, systemRandom, systemScheduler } from '../../packages/herdless/dist/index.js';
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

/** How many reused options objects take turns in the "taking turns" subjects. */
export const TURNS = 8;

/** `count` options objects, each reused, handed out in turn: `next()` returns the next one. */
function takingTurns(make, count = TURNS) {
  const objects = Array.from({ length: count }, (_, i) => make(i));
  let i = 0;
  return () => {
    const o = objects[i];
    i = i === count - 1 ? 0 : i + 1;
    return o;
  };
}

const COCKATIEL = 'cockatiel 3 retry().execute(op)';

/**
 * Each herdless subject's counterpart in cockatiel, for the "× cockatiel" column: a prepared policy
 * for herdless's prepared forms, and a policy built per call where herdless is given its options per
 * call (cockatiel takes options only when a policy is built).
 */
export const cockatielEquivalent = {
  'herdless retry(op)': COCKATIEL,
  'herdless retry(op, options)': COCKATIEL,
  'herdless createRetry(options)(op)': COCKATIEL,
  'herdless retry(op, { maxAttempts: 3 }) new literal per call': 'cockatiel 3 retry(handleAll, { maxAttempts: 2 }) built per call',
  [`herdless retry(op, options) ${TURNS} reused objects taking turns`]: `cockatiel 3 ${TURNS} prepared policies taking turns`,
  'herdless retry(op, { backoff: fullJitterBackoff({…}) }) built per call': 'cockatiel 3 retry(handleAll, { backoff: new ExponentialBackoff({…}) }) built per call',
};

/** The success-path subjects: name → (operation) => Promise. */
export function successSubjects() {
  const retrier = createRetry(fullOptions);
  // The OpenTelemetry adapter with no provider registered (the API's no-op): it reports itself
  // disabled, so the layers skip it — the figure to hold against retry(op).
  const quietOtel = { telemetry: otelTelemetry() };
  const otelRetrier = createRetry(quietOtel);
  const cockatiel = cockatielRetry(handleAll, { maxAttempts: 2, backoff: new ConstantBackoff(0) });
  const turns = takingTurns((i) => ({ maxAttempts: 2 + i, backoff: constantBackoff({ delayMs: i }) }));
  const cockatielTurns = takingTurns((i) => cockatielRetry(handleAll, { maxAttempts: 1 + i, backoff: new ConstantBackoff(i) }));
  return {
    'bare await op()': (f) => f(),
    // The least any promise-returning wrapper can do: one derived promise, no state, no checks.
    'floor: op().then(undefined, shared fn)': (f) => f().then(undefined, onRejected),
    'herdless retry(op)': (f) => retry(f),
    'herdless retry(op, options)': (f) => retry(f, fullOptions),
    'herdless createRetry(options)(op)': (f) => retrier(f),
    'herdless retry(op, { maxAttempts: 3 }) new literal per call': (f) => retry(f, { maxAttempts: 3 }),
    [`herdless retry(op, options) ${TURNS} reused objects taking turns`]: (f) => retry(f, turns()),
    'herdless retry(op, { backoff: fullJitterBackoff({…}) }) built per call': (f) =>
      retry(f, { maxAttempts: 3, backoff: fullJitterBackoff({ initialBackoffMs: 100, maxBackoffMs: 10_000 }) }),
    [COCKATIEL]: (f) => cockatiel.execute(f),
    'cockatiel 3 retry(handleAll, { maxAttempts: 2 }) built per call': (f) => cockatielRetry(handleAll, { maxAttempts: 2 }).execute(f),
    [`cockatiel 3 ${TURNS} prepared policies taking turns`]: (f) => cockatielTurns().execute(f),
    'cockatiel 3 retry(handleAll, { backoff: new ExponentialBackoff({…}) }) built per call': (f) =>
      cockatielRetry(handleAll, { maxAttempts: 2, backoff: new ExponentialBackoff({ generator: fullJitterGenerator, initialDelay: 100, maxDelay: 10_000 }) }).execute(f),
    'herdless retry(op, { telemetry: otel }), no OTel provider': (f) => retry(f, quietOtel),
    'herdless createRetry({ telemetry: otel })(op), no OTel provider': (f) => otelRetrier(f),
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
