import type { CallRetryBuffer } from '../grpc/retry-buffer.js';

interface Item<T> {
  readonly value: T;
  /** Bytes held in the retry buffer (0 once committed). */
  readonly held: number;
}

/**
 * @internal A client stream's request messages, read once from the application's iterable and
 * kept for replay until the call commits (gRFC A6: "as long as the entirety of the outgoing
 * message is in the buffer, it can be resent and retried"). Each attempt reads its own iterable
 * from the start; one shared pull feeds them all, so a message the application produced while an
 * attempt was failing is not lost. A message that does not fit the buffer commits the call
 * (`onOverflow`); from then on only the newest attempt reads, and what it has read is let go.
 */
export class ReplaySource<T> {
  readonly #source: AsyncIterator<T>;
  #items: Item<T>[] = [];
  /** The index of `#items[0]`. */
  #offset = 0;
  #ended = false;
  #failed: { error: unknown } | undefined;
  #pulling: Promise<void> | undefined;
  #committed = false;
  /** The newest attempt: only it may let go of messages once committed. */
  #current = 0;
  /** How far the newest attempt has read (an index, as `#offset`). */
  #read = 0;

  constructor(
    source: AsyncIterable<T>,
    private readonly buffer: CallRetryBuffer,
    private readonly sizeOf: (value: T) => number,
    private readonly onOverflow: () => void,
  ) {
    this.#source = source[Symbol.asyncIterator]();
  }

  /** No attempt follows the newest one: what it has read need not be kept. */
  commit(): void {
    this.#committed = true;
    this.#letGo(this.#read);
  }

  /** The request messages for a new attempt, from the first (an async generator: Connect needs `throw`). */
  attempt(): AsyncIterable<T> {
    this.#read = this.#offset;
    return this.#messages(++this.#current, this.#offset);
  }

  async *#messages(id: number, from: number): AsyncGenerator<T, void, undefined> {
    let index = from;
    // A newer attempt has started: this one's request stream ends.
    while (id === this.#current) {
      const item = this.#items[index - this.#offset];
      if (item !== undefined) {
        index++;
        this.#read = index;
        this.#letGo(index);
        yield item.value;
        continue;
      }
      if (this.#failed !== undefined) throw this.#failed.error;
      if (this.#ended) return;
      await this.#pull();
    }
  }

  /** Once committed, the messages before `index` (read by the newest attempt) leave the buffer. */
  #letGo(index: number): void {
    if (!this.#committed) return;
    while (this.#offset < index && this.#items.length > 0) {
      this.buffer.release(this.#items.shift()!.held);
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
        let held = 0;
        if (!this.#committed) {
          const size = this.sizeOf(result.value);
          if (this.buffer.hold(size)) held = size;
          else {
            this.#committed = true;
            this.onOverflow();
          }
        }
        this.#items.push({ value: result.value, held });
      },
      (error: unknown) => {
        this.#pulling = undefined;
        this.#failed = { error };
      },
    );
    return this.#pulling;
  }

  /**
   * The call ended: everything leaves the buffer. (Connect itself closes the application's
   * iterable when the call ends.)
   */
  close(): void {
    this.#items = [];
    this.buffer.releaseAll();
    this.#current++;
  }
}
