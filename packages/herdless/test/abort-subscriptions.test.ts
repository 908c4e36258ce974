// One `abort` listener per caller signal however many calls wait on it (the runtime's abort-link):
// the rules one by one, on plain AbortControllers, without a call around them. (signals.test.ts
// drives the same through thousands of retry(), withRetry and breaker calls.)
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { signalOption, subscribe, unsubscribe } from '../src/runtime/abort-link.js';
import { invalidOption } from './support/invalid-option.js';

const listeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;

/** A subscriber that logs its name when told, and what it saw of the signal then. */
function subscriber(name: string, log: string[], signal: AbortSignal) {
  return { handleEvent: () => void log.push(`${name}:${String(signal.reason)}`) };
}

describe('subscribe and unsubscribe', () => {
  it('the first subscriber adds one listener, later ones none; the last one out removes it', () => {
    const controller = new AbortController();
    const log: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((n) => subscriber(n, log, controller.signal));
    subscribe(controller.signal, a!);
    expect(listeners(controller.signal)).toBe(1);
    subscribe(controller.signal, b!);
    subscribe(controller.signal, c!);
    expect(listeners(controller.signal)).toBe(1);
    unsubscribe(controller.signal, a!);
    unsubscribe(controller.signal, b!);
    expect(listeners(controller.signal)).toBe(1);
    unsubscribe(controller.signal, c!);
    expect(listeners(controller.signal)).toBe(0);
    controller.abort('late');
    expect(log).toEqual([]);
  });

  it('an abort tells every subscriber once, in the order they came, and takes the listener off', () => {
    const controller = new AbortController();
    const log: string[] = [];
    for (const n of ['a', 'b', 'c']) subscribe(controller.signal, subscriber(n, log, controller.signal));
    controller.abort('stop');
    expect(log).toEqual(['a:stop', 'b:stop', 'c:stop']);
    expect(listeners(controller.signal)).toBe(0);
  });

  it('a subscriber that left is not told; the others are', () => {
    const controller = new AbortController();
    const log: string[] = [];
    const a = subscriber('a', log, controller.signal);
    subscribe(controller.signal, a);
    subscribe(controller.signal, subscriber('b', log, controller.signal));
    unsubscribe(controller.signal, a);
    controller.abort('stop');
    expect(log).toEqual(['b:stop']);
  });

  it('unsubscribing one that never subscribed (or already left) keeps the others subscribed', () => {
    const controller = new AbortController();
    const log: string[] = [];
    const a = subscriber('a', log, controller.signal);
    const stranger = subscriber('x', log, controller.signal);
    subscribe(controller.signal, a);
    unsubscribe(controller.signal, stranger);
    unsubscribe(new AbortController().signal, a); // another signal: nothing to do
    expect(listeners(controller.signal)).toBe(1);
    controller.abort('stop');
    expect(log).toEqual(['a:stop']);
  });

  it('unsubscribing after the abort is a no-op, and a new subscription on another signal starts afresh', () => {
    const first = new AbortController();
    const log: string[] = [];
    const a = subscriber('a', log, first.signal);
    subscribe(first.signal, a);
    first.abort('one');
    unsubscribe(first.signal, a);
    expect(log).toEqual(['a:one']);
    const second = new AbortController();
    subscribe(second.signal, subscriber('b', log, second.signal));
    expect(listeners(second.signal)).toBe(1);
    second.abort('two');
    expect(log).toEqual(['a:one', 'b:two']);
  });

  it('a subscriber that subscribes again during the abort starts a new relay (the fired one let go)', () => {
    const controller = new AbortController();
    const log: string[] = [];
    const again = subscriber('again', log, controller.signal);
    subscribe(controller.signal, {
      handleEvent: () => {
        log.push('first');
        subscribe(controller.signal, again);
      },
    });
    controller.abort('stop');
    expect(log).toEqual(['first']);
    // The new relay's listener is on a signal that has fired: the caller checks `aborted` first.
    expect(listeners(controller.signal)).toBe(1);
    unsubscribe(controller.signal, again);
    expect(listeners(controller.signal)).toBe(0);
  });
});

describe('the signal option', () => {
  it('undefined is no signal; an AbortSignal is itself', () => {
    const signal = new AbortController().signal;
    expect(signalOption('retry', undefined)).toBeUndefined();
    expect(signalOption('retry', signal)).toBe(signal);
  });

  it('anything with both listener methods and a boolean aborted will do (a polyfill, another realm)', () => {
    const lookalike = { aborted: false, addEventListener: () => undefined, removeEventListener: () => undefined };
    expect(signalOption('retry', lookalike)).toBe(lookalike);
  });

  it.each([
    ['null', null, 'null'],
    ['a string', 'abort', '"abort"'],
    ['no removeEventListener', { aborted: false, addEventListener: () => undefined }, 'an object (Object)'],
    ['no addEventListener', { aborted: false, removeEventListener: () => undefined }, 'an object (Object)'],
    ['aborted not a boolean', { aborted: 0, addEventListener: () => undefined, removeEventListener: () => undefined }, 'an object (Object)'],
  ])('refuses %s, naming the owner and the field', (_name, value, shown) => {
    const error = invalidOption(() => signalOption('createHedger', value));
    expect(error.field).toBe('signal');
    expect(error.message).toBe(`createHedger: signal must be an AbortSignal, got ${shown}`);
  });
});
