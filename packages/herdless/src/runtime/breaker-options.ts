import { isNotFatal } from '../core/classify/classify.js';
import { isGivenUp } from '../core/classify/hints.js';
import type { BreakerEvent, BreakerState } from '../core/breaker/events.js';
import { CircuitBreakerMachine } from '../core/breaker/machine.js';
import { BREAKER_POLICY_KEYS } from '../core/breaker/options.js';
import { InvalidOptionError } from '../core/errors.js';
import { checkedRng } from '../core/rng.js';
import { checkedNow } from '../core/time.js';
import { BreakerCount } from './breaker-count.js';
import { functionOption, objectOption } from '../core/validate.js';
import type { BreakerExecuteOptions, CircuitBreakerOptions } from './breaker-types.js';
import { systemClock } from './system-clock.js';
import { systemRandom } from './system-random.js';
import { emitTelemetry, telemetryOption, type BreakerStateEvent } from './telemetry.js';

// A circuit breaker's options, read and checked once when it is made, and the telemetry of its
// state changes; and the options of one execute() call.

/**
 * @internal Reads and validates `circuitBreaker()`'s options into the breaker's count: the machine (restored from
 * `initialState` when one is given), the clocks, the classifiers; state changes are reported to
 * the telemetry observer from here on.
 * @throws InvalidOptionError naming the field and the value.
 */
export function readBreakerOptions(options: CircuitBreakerOptions | undefined): BreakerCount {
  const o = objectOption('circuitBreaker', 'options', options, [...BREAKER_POLICY_KEYS, 'clock', 'isFailure', 'isResultFailure', 'telemetry', 'name', 'initialState', 'now']);
  const { clock: _clock, isFailure: _isFailure, isResultFailure: _isResultFailure, telemetry: _telemetry, name: _name, initialState, now: _now, ...policy } = o;
  const machine = new CircuitBreakerMachine({ ...policy, random: o.random === undefined ? systemRandom : checkedRng(o.random, 'circuitBreaker', 'random') });
  const clock = o.clock ?? systemClock;
  if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function') {
    throw new InvalidOptionError('circuitBreaker', 'clock', clock, 'must be an object with a now() method');
  }
  const isFailure = functionOption('circuitBreaker', 'isFailure', o.isFailure) ?? isNotFatal;
  const isResultFailure = functionOption('circuitBreaker', 'isResultFailure', o.isResultFailure) ?? isGivenUp;
  if (o.name !== undefined && (typeof o.name !== 'string' || o.name === '')) throw new InvalidOptionError('circuitBreaker', 'name', o.name, 'must be a non-empty string');
  const name = o.name ?? 'default';
  const wall = { now: functionOption('circuitBreaker', 'now', o.now) ?? Date.now };
  const now = (): number => checkedNow(wall, 'circuitBreaker', 'now()', 'must return a finite number of ms since the epoch, as Date.now() does');
  if (initialState !== undefined) machine.restore(initialState, checkedNow(clock, 'circuitBreaker'), now(), 'initialState');
  const telemetry = telemetryOption('circuitBreaker', o.telemetry);
  if (telemetry !== undefined) {
    machine.onStateChange((event) => {
      emitTelemetry(telemetry, breakerStateEvent(name, event), undefined);
    });
  }
  return new BreakerCount(machine, clock, isFailure, isResultFailure, name, now, telemetry);
}

/** The state an event leaves the breaker in. */
const STATE_AFTER: Readonly<Record<BreakerEvent['type'], BreakerState>> = { open: 'open', 'half-open': 'half-open', close: 'closed', isolate: 'open', reset: 'closed' };

/** A machine event as telemetry's `breaker-state`, with the manual cause when there is one. */
function breakerStateEvent(breaker: string, event: BreakerEvent): BreakerStateEvent {
  const base = { type: 'breaker-state', breaker, from: event.from, to: STATE_AFTER[event.type], at: event.at } as const;
  if (event.type === 'isolate' || event.type === 'reset') return { ...base, cause: event.type };
  if (event.type === 'half-open' && event.released) return { ...base, cause: 'release' };
  return base;
}

/**
 * @internal The signal of `execute()`'s options, checked: a misspelt key would otherwise be
 * ignored, and a `signal` that is not an AbortSignal fail inside as an unrelated TypeError.
 */
export function executeSignal(options: BreakerExecuteOptions): AbortSignal | undefined {
  const { signal } = objectOption('circuitBreaker.execute', 'options', options, ['signal']);
  if (signal === undefined) return undefined;
  if (typeof signal !== 'object' || signal === null || typeof signal.addEventListener !== 'function' || typeof signal.aborted !== 'boolean') {
    throw new InvalidOptionError('circuitBreaker.execute', 'signal', signal, 'must be an AbortSignal');
  }
  return signal;
}
