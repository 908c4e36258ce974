import type { BreakerPermit } from '../core/breaker/machine.js';
import { subscribe, unsubscribe } from './abort-link.js';
import type { BreakerCount } from './breaker-count.js';
import type { BreakerCallContext } from './breaker-types.js';

// Running one admitted call of a breaker: the operation's outcome (or the caller's abort) settles
// its permit exactly once.

/**
 * The contexts of calls without a signal: two constants, shared by every such call. Nothing can
 * abort such a call, so any never-aborting signal will do; each read makes a fresh one (a signal is
 * never shared between calls: listeners a consumer leaves on it must not pile up).
 */
const CALL_CONTEXT: BreakerCallContext = /* @__PURE__ */ Object.freeze({
  get signal(): AbortSignal {
    return new AbortController().signal;
  },
  trial: false,
});
const TRIAL_CONTEXT: BreakerCallContext = /* @__PURE__ */ Object.freeze({
  get signal(): AbortSignal {
    return new AbortController().signal;
  },
  trial: true,
});

/**
 * @internal A call without a signal: nothing can end it but `fn` itself, so its outcome is counted by one
 * `.then()` on the operation's promise (no executor, no abort bookkeeping). A value that is not a
 * thenable is counted at once, before `execute` returns.
 */
export function runLean<T>(count: BreakerCount, fn: (context: BreakerCallContext) => T | PromiseLike<T>, permit: BreakerPermit): Promise<T> {
  let result: T | PromiseLike<T>;
  try {
    result = fn(permit.trial ? TRIAL_CONTEXT : CALL_CONTEXT);
  } catch (error) {
    try {
      count.settleError(permit, error, false);
    } catch (classifierError) {
      return Promise.reject(classifierError);
    }
    return Promise.reject(error);
  }
  if ((typeof result === 'object' && result !== null) || typeof result === 'function') {
    // Promise.resolve adopts any thenable, and turns a throwing `then` getter into a rejection.
    const settled = result instanceof Promise ? (result as Promise<T>) : Promise.resolve(result);
    return settled.then(
      (value) => {
        count.settleValue(permit, value);
        return value;
      },
      (error: unknown) => {
        count.settleError(permit, error, false);
        throw error;
      },
    );
  }
  try {
    count.settleValue(permit, result);
  } catch (classifierError) {
    return Promise.reject(classifierError);
  }
  return Promise.resolve(result);
}

/** @internal A call with a signal: the first of `fn`'s outcome and the caller's abort settles it. */
export function runWithSignal<T>(count: BreakerCount, fn: (context: BreakerCallContext) => T | PromiseLike<T>, permit: BreakerPermit, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const settle = (): void => {
      done = true;
      unsubscribe(signal, aborts);
    };
    const onAbort = (): void => {
      if (done) return;
      settle();
      count.finish(permit, 'ignored');
      reject(signal.reason);
    };
    // One listener on the caller's signal however many calls share it (see abort-link).
    const aborts = { handleEvent: onAbort };
    const onValue = (value: T): void => {
      if (done) return;
      settle();
      try {
        count.settleValue(permit, value);
      } catch (classifierError) {
        reject(classifierError);
        return;
      }
      resolve(value);
    };
    const onError = (error: unknown): void => {
      if (done) return;
      settle();
      try {
        count.settleError(permit, error, signal.aborted);
      } catch (classifierError) {
        reject(classifierError);
        return;
      }
      reject(error);
    };

    subscribe(signal, aborts);
    let result: T | PromiseLike<T>;
    try {
      result = fn({ signal, trial: permit.trial });
    } catch (error) {
      onError(error);
      return;
    }
    if ((typeof result === 'object' && result !== null) || typeof result === 'function') {
      // Promise.resolve adopts any thenable, and turns a throwing `then` getter into a rejection.
      Promise.resolve(result).then(onValue, onError);
    } else {
      onValue(result);
    }
  });
}
