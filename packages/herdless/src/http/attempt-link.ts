import { subscribe, unsubscribe } from '../runtime/abort-link.js';

/**
 * @internal The signal an attempt's request gets, when the caller has a signal of its own that is
 * not the attempt's. While the call runs, the attempt's signal already follows the caller's
 * (`retry()` relays the abort), so the link listens to the attempt's short-lived signal only, and
 * adds nothing to the caller's, however many attempts the call makes. Fetch semantics say the
 * caller's signal also aborts the reading of the body that is returned: only for that response,
 * once the call has returned it, does the link subscribe to the caller's signal — until the caller
 * aborts, or the response is garbage-collected (nothing then reads its body).
 */
export class AttemptLink {
  readonly #controller = new AbortController();
  readonly #attempt: AbortSignal;
  #caller: AbortSignal | undefined;

  constructor(attempt: AbortSignal) {
    this.#attempt = attempt;
    if (attempt.aborted) this.#controller.abort(attempt.reason);
    else attempt.addEventListener('abort', this);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The attempt's signal or, after {@link followCaller}, the caller's aborted. */
  handleEvent(): void {
    this.#controller.abort(this.#caller === undefined ? this.#attempt.reason : this.#caller.reason);
    this.#caller = undefined;
  }

  /** The attempt is over: stop listening to its signal. */
  settled(): void {
    this.#attempt.removeEventListener('abort', this);
  }

  /** This attempt's response (an object with a body still to read) is returned: the body follows the caller's signal from now on. */
  followCaller(caller: AbortSignal, response: object): void {
    if (caller.aborted) {
      this.#controller.abort(caller.reason);
      return;
    }
    this.#caller = caller;
    subscribe(caller, this);
    returnedLinks?.register(response, { caller, link: this });
  }

  /** The response was collected: nobody reads its body any more. */
  release(caller: AbortSignal): void {
    this.#caller = undefined;
    unsubscribe(caller, this);
  }
}

/** Ends the caller subscription of a returned response's link once the response is gone. */
const returnedLinks =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry<{ caller: AbortSignal; link: AttemptLink }>(({ caller, link }) => link.release(caller))
    : undefined;
