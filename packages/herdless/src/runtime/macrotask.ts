/**
 * @internal One turn of the event loop: a promise that settles in the next macrotask, after every
 * microtask (promise continuation) already queued has run. `setImmediate` where the runtime has one
 * (Node.js, Bun), else a global `setTimeout` of 0 ms (browsers). Not a `Scheduler`: it measures no
 * time, so a virtual clock needs no advance for it; fake timers that replace these globals must run
 * them. Used by `retry()` to let the loop turn during a run of 0 ms waits, and by `ManualClock`
 * between the timers it fires.
 */
export function nextMacrotask(): Promise<void> {
  const g = globalThis as { setImmediate?: (callback: () => void) => unknown };
  return new Promise((resolve) => {
    if (typeof g.setImmediate === 'function') g.setImmediate(resolve);
    else setTimeout(resolve, 0);
  });
}
