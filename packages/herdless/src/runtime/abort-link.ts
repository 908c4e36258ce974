/**
 * One `abort` listener per caller signal, however many calls wait on it.
 *
 * A long-lived signal (a server's shutdown signal, a page's) is often shared by many calls at once.
 * Each call adding its own listener puts N listeners on it — Node.js warns past 10
 * (`MaxListenersExceededWarning`) — and anything a call forgets to remove stays for the signal's
 * life. So the calls subscribe here instead: the first subscriber adds one listener (the signal's
 * {@link Relay}), later ones join its set, and the last to leave removes the listener again. Nothing
 * Node-specific, so it works the same in browsers.
 */
import { InvalidOptionError } from '../core/errors.js';
import { hasMethods } from '../core/validate.js';

/** Anything told when a signal aborts (a `handleEvent` object, so no closure is needed). */
export interface AbortSubscriber {
  handleEvent(): void;
}

/** The one listener a signal carries while anyone subscribes to it. */
class Relay {
  readonly signal: AbortSignal;
  readonly subscribers = new Set<AbortSubscriber>();

  constructor(signal: AbortSignal) {
    this.signal = signal;
  }

  handleEvent(): void {
    // The signal fires once: hand over to every subscriber, in the order they came, and let go.
    relays.delete(this.signal);
    this.signal.removeEventListener('abort', this);
    const subscribers = [...this.subscribers];
    this.subscribers.clear();
    for (const subscriber of subscribers) subscriber.handleEvent();
  }
}

// Weak: a relay (and its listener) exists only while it has subscribers, and never keeps a signal alive.
const relays = /* @__PURE__ */ new WeakMap<AbortSignal, Relay>();

/**
 * `subscriber.handleEvent()` runs when `signal` aborts, until {@link unsubscribe}. The caller checks
 * `signal.aborted` first: a signal that has already aborted fires nothing more.
 */
export function subscribe(signal: AbortSignal, subscriber: AbortSubscriber): void {
  let relay = relays.get(signal);
  if (relay === undefined) {
    relay = new Relay(signal);
    relays.set(signal, relay);
    signal.addEventListener('abort', relay);
  }
  relay.subscribers.add(subscriber);
}

/** Ends a subscription (a no-op for one that has ended or fired); the last one out removes the listener. */
export function unsubscribe(signal: AbortSignal, subscriber: AbortSubscriber): void {
  const relay = relays.get(signal);
  if (relay === undefined || !relay.subscribers.delete(subscriber)) return;
  if (relay.subscribers.size === 0) {
    relays.delete(signal);
    signal.removeEventListener('abort', relay);
  }
}

/**
 * @internal The `signal` option of a call: undefined, or something that is an AbortSignal (what
 * {@link subscribe} needs of it: both listener methods and `aborted`).
 */
export function signalOption(owner: string, signal: unknown): AbortSignal | undefined {
  if (signal === undefined) return undefined;
  if (!hasMethods(signal, ['addEventListener', 'removeEventListener']) || typeof (signal as AbortSignal).aborted !== 'boolean') {
    throw new InvalidOptionError(owner, 'signal', signal, 'must be an AbortSignal');
  }
  return signal as AbortSignal;
}
