// How a failing hook or telemetry observer is reported, word for word: to onHookError if given; if
// that throws too, or without it, as a process warning; where there is no process.emitWarning (a
// browser, a worker), on the console. What a hook returns is never awaited, and only a thenable's
// rejection is reported.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { callHook, reportHookError } from '../src/runtime/hooks.js';
import { emitTelemetry } from '../src/runtime/telemetry.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** Lets a rejected promise's handler run. */
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('reportHookError', () => {
  it('goes to onHookError with the error and the hook, and nowhere else', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const seen: unknown[] = [];
    const error = new Error('x');
    reportHookError((e, hook) => void seen.push(e, hook), 'onHedge', error);
    expect(seen).toEqual([error, 'onHedge']);
    expect(warn).not.toHaveBeenCalled();
  });

  it('without onHookError: a process warning naming the hook and the error', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    reportHookError(undefined, 'onRetry', new TypeError('bad field'));
    expect(warn.mock.calls).toEqual([
      ["herdless: the onRetry hook failed; the call's outcome is unchanged: TypeError: bad field", { type: 'HerdlessWarning', code: 'HERDLESS_HOOK_FAILED' }],
    ]);
  });

  it('a thrown value that is no Error is shown as a string', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    reportHookError(undefined, 'telemetry', 42);
    expect(warn.mock.calls[0]![0]).toBe("herdless: the telemetry hook failed; the call's outcome is unchanged: 42");
  });

  it('an onHookError that throws: its own error is the warning, naming the failure it was reporting', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    reportHookError(
      () => {
        throw new RangeError('logger full');
      },
      'onGiveUp',
      new Error('first'),
    );
    expect(warn.mock.calls[0]![0]).toBe("herdless: the onHookError hook (reporting a failure of onGiveUp) failed; the call's outcome is unchanged: RangeError: logger full");
  });

  it('where process.emitWarning is missing, on the console, with the error itself', () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const saved = process.emitWarning;
    (process as { emitWarning?: unknown }).emitWarning = undefined;
    try {
      const failure = new Error('down');
      reportHookError(undefined, 'onRetry', failure);
      expect(error.mock.calls).toEqual([["herdless: the onRetry hook failed; the call's outcome is unchanged: Error: down", failure]]);
    } finally {
      process.emitWarning = saved;
    }
  });
});

describe('callHook', () => {
  it('passes the event; a value returned is ignored', () => {
    const seen: unknown[] = [];
    const reported: unknown[] = [];
    callHook((e: number) => (seen.push(e), 'ignored'), 7, 'onRetry', (e) => void reported.push(e));
    expect(seen).toEqual([7]);
    expect(reported).toEqual([]);
  });

  it('a rejected promise or thenable (a function with then too) is reported, not awaited', async () => {
    const reported: unknown[] = [];
    const onHookError = (e: unknown, hook: string): void => void reported.push([hook, e]);
    callHook(() => Promise.reject(new Error('p')), 1, 'onRetry', onHookError);
    callHook(() => ({ then: (_: unknown, reject: (e: unknown) => void) => reject('t') }), 1, 'onGiveUp', onHookError);
    callHook(() => Object.assign(() => undefined, { then: (_: unknown, reject: (e: unknown) => void) => reject('f') }), 1, 'onHedge', onHookError);
    expect(reported).toEqual([['onGiveUp', 't'], ['onHedge', 'f']]); // a thenable's then() runs at once
    await turn();
    expect(reported).toEqual([['onGiveUp', 't'], ['onHedge', 'f'], ['onRetry', new Error('p')]]);
  });

  it('null, an object without a then() method and a then that is not a function are plain values', () => {
    const reported: unknown[] = [];
    for (const value of [null, {}, { then: 5 }, 0, 'then']) callHook(() => value, 1, 'onRetry', (e) => void reported.push(e));
    expect(reported).toEqual([]);
  });

  it('no hook, nothing to do', () => {
    expect(() => callHook(undefined, 1, 'onRetry', undefined)).not.toThrow();
  });
});

describe('emitTelemetry', () => {
  const event = { type: 'retry', call: { layer: 'retry' }, attempt: 1, delayMs: 5, delaySource: 'backoff', error: null } as const;

  it('a throwing or rejecting observer is reported as the telemetry hook', async () => {
    const reported: unknown[] = [];
    const onHookError = (e: unknown, hook: string): void => void reported.push([hook, e]);
    emitTelemetry({ onEvent: () => { throw 'sync'; } }, event, onHookError);
    emitTelemetry({ onEvent: () => Promise.reject('async') }, event, onHookError);
    await turn();
    expect(reported).toEqual([['telemetry', 'sync'], ['telemetry', 'async']]);
  });

  it('what onEvent returns otherwise is ignored: null, a number, an object without then()', () => {
    const reported: unknown[] = [];
    for (const value of [null, 1, {}, { then: 'no' }]) emitTelemetry({ onEvent: () => value }, event, (e) => void reported.push(e));
    expect(reported).toEqual([]);
  });
});
