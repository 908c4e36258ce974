/**
 * @internal A request stream shared by hedged attempts that run at once (gRFC A6, "Hedging
 * Policy": every hedge sends the whole request). The application's messages are read once, by
 * whichever attempt needs the next one first, and kept, so that each attempt — and each hedge that
 * starts later — reads them all from the first, at its own pace. `hold` decides whether a message
 * may be kept for replay (the retry buffer); when it refuses, `onOverflow` must commit the call
 * (A6: "the RPC becomes committed"). Once committed to one attempt, only that attempt reads on, and
 * what it has read is let go; the other attempts' request streams end.
 */
export class HedgeReplay<T> {
  readonly #source: AsyncIterator<T>;
  #items: T[] = [];
  /** The index of `#items[0]` in the whole stream. */
  #offset = 0;
  #ended = false;
  #failed: { error: unknown } | undefined;
  #pulling: Promise<void> | undefined;
  /** The attempt the call is committed to (its number), once there is one. */
  #chosen: number | undefined;
  /** How many messages each attempt has read. */
  readonly #read = new Map<number, number>();

  constructor(
    source: AsyncIterable<T>,
    private readonly hold: (value: T) => boolean,
    private readonly onOverflow: () => void,
  ) {
    this.#source = source[Symbol.asyncIterator]();
  }

  /** Commits to attempt `number`: only it reads on (the first commit stands). */
  commit(number: number): void {
    this.#chosen ??= number;
    this.#letGo();
  }

  /** Of the attempts `candidates`, the one that has read the most (A6: the one "on which the maximum number of messages have already been sent"). */
  furthest(candidates: Iterable<number>): number | undefined {
    let best: number | undefined;
    for (const n of candidates) if (best === undefined || (this.#read.get(n) ?? 0) > (this.#read.get(best) ?? 0)) best = n;
    return best;
  }

  /** Attempt `number`'s request stream, from the first message (an async generator: Connect needs `throw`). */
  attempt(number: number): AsyncGenerator<T, void, undefined> {
    this.#read.set(number, 0);
    return this.#messages(number);
  }

  async *#messages(number: number): AsyncGenerator<T, void, undefined> {
    let index = 0;
    while (this.#chosen === undefined || this.#chosen === number) {
      if (index < this.#offset + this.#items.length) {
        const value = this.#items[index - this.#offset]!;
        index++;
        this.#read.set(number, index);
        this.#letGo();
        yield value;
        continue;
      }
      if (this.#failed !== undefined) throw this.#failed.error;
      if (this.#ended) return;
      await this.#pull();
    }
  }

  /** Once committed, the messages the committed attempt has read are not needed again. */
  #letGo(): void {
    if (this.#chosen === undefined) return;
    const upTo = this.#read.get(this.#chosen) ?? 0;
    while (this.#offset < upTo && this.#items.length > 0) {
      this.#items.shift();
      this.#offset++;
    }
  }

  #pull(): Promise<void> {
    this.#pulling ??= this.#source.next().then(
      (result) => {
        this.#pulling = undefined;
        if (result.done === true) {
          this.#ended = true;
          return;
        }
        this.#items.push(result.value);
        if (this.#chosen === undefined && !this.hold(result.value)) this.onOverflow();
      },
      (error: unknown) => {
        this.#pulling = undefined;
        this.#failed = { error };
      },
    );
    return this.#pulling;
  }

  /** The call ended: nothing more is kept, and every attempt's request stream ends. */
  close(): void {
    this.#items = [];
    this.#chosen = -1;
  }
}
