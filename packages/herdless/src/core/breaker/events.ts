/** The three states of a circuit breaker. */
export type BreakerState = 'closed' | 'open' | 'half-open';

/**
 * The breaker opened: from closed when its counting strategy tripped, or from half-open when a
 * trial call failed. Calls are refused until `nextTrialAt`.
 */
export interface BreakerOpenEvent {
  readonly type: 'open';
  readonly from: 'closed' | 'half-open';
  /** When it opened, in ms on the breaker's clock. */
  readonly at: number;
  /** How long it stays open, in ms. */
  readonly openDurationMs: number;
  /** When the first trial call may be admitted (`at + openDurationMs`), in ms on the breaker's clock. */
  readonly nextTrialAt: number;
  /** Openings since the breaker last closed, this one included (1, 2, …): the backoff's retry number. */
  readonly openings: number;
}

/**
 * The breaker admits trial calls: its open period ended (noticed lazily, on the first acquire,
 * state read or snapshot at or after `nextTrialAt`; `at` is that moment), or the last isolation
 * was released (`released: true`; `at` is the release).
 */
export interface BreakerHalfOpenEvent {
  readonly type: 'half-open';
  readonly from: 'open';
  /** When the breaker half-opened, in ms on the breaker's clock. */
  readonly at: number;
  /** True when the half-open period began because the last isolation ended, not because a timer ran out. */
  readonly released: boolean;
}

/** Enough trial calls succeeded: the breaker closed and counts afresh. */
export interface BreakerCloseEvent {
  readonly type: 'close';
  readonly from: 'half-open';
  /** When it closed, in ms on the breaker's clock. */
  readonly at: number;
}

/**
 * The breaker was isolated: forced open by `isolate()` (an operator's decision, not a failure
 * count). It refuses every call until the last isolation is released (it then half-opens) or
 * `reset()` closes it. Only the first of overlapping isolations emits it.
 */
export interface BreakerIsolateEvent {
  readonly type: 'isolate';
  /** The state before the isolation. */
  readonly from: BreakerState;
  /** When, in ms on the breaker's clock. */
  readonly at: number;
}

/**
 * `reset()` closed the breaker by hand: counts, openings and isolations forgotten, as a new
 * breaker's. Emitted on every reset, even of a breaker that was already closed.
 */
export interface BreakerResetEvent {
  readonly type: 'reset';
  /** The state before the reset. */
  readonly from: BreakerState;
  /** Whether the reset ended an isolation. */
  readonly wasIsolated: boolean;
  /** When, in ms on the breaker's clock. */
  readonly at: number;
}

/**
 * An event of a circuit breaker. `type` names what happened and so the state after it:
 * `'open'` and `'isolate'` → open, `'half-open'` → half-open, `'close'` and `'reset'` → closed.
 */
export type BreakerEvent = BreakerOpenEvent | BreakerHalfOpenEvent | BreakerCloseEvent | BreakerIsolateEvent | BreakerResetEvent;

/** The names of the breaker's events: `'open'`, `'half-open'`, `'close'`, `'isolate'` and `'reset'`. */
export type BreakerEventType = BreakerEvent['type'];

/** The event of type `T`. */
export type BreakerEventOf<T extends BreakerEventType> = Extract<BreakerEvent, { type: T }>;

/** Unsubscribes a listener; calling it twice is harmless. */
export type Unsubscribe = () => void;

type Listener = (event: BreakerEvent) => void;

/**
 * The listener lists of one breaker. Lists are replaced, never mutated, so a listener that
 * (un)subscribes while an event is being delivered changes only later deliveries. A listener that
 * throws is reported to `onError` and delivery goes on: a broken metrics hook must not leave the
 * breaker half-way through a transition.
 */
export class BreakerListeners {
  #byType: Record<BreakerEventType | 'change', readonly Listener[]> = { open: [], 'half-open': [], close: [], isolate: [], reset: [], change: [] };
  #count = 0;

  constructor(private readonly onError: (error: unknown, event: BreakerEvent) => void) {}

  /** True when anyone listens: the machine builds no event object otherwise. */
  get active(): boolean {
    return this.#count > 0;
  }

  add(type: BreakerEventType | 'change', listener: Listener): Unsubscribe {
    this.#byType[type] = [...this.#byType[type], listener];
    this.#count++;
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      const list = this.#byType[type];
      const i = list.indexOf(listener);
      this.#byType[type] = [...list.slice(0, i), ...list.slice(i + 1)];
      this.#count--;
    };
  }

  emit(event: BreakerEvent): void {
    // Read both lists before calling anyone, so (un)subscribing inside a listener affects later events only.
    const specific = this.#byType[event.type];
    const general = this.#byType.change;
    for (const listener of specific) this.#call(listener, event);
    for (const listener of general) this.#call(listener, event);
  }

  #call(listener: Listener, event: BreakerEvent): void {
    try {
      listener(event);
    } catch (error) {
      try {
        this.onError(error, event);
      } catch {
        // The error hook itself failed: there is nowhere left to report to, and the breaker must go on.
      }
    }
  }
}
