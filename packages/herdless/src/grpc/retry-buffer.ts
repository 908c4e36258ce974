/** grpc-js's default for `grpc.per_rpc_retry_buffer_size` (grpc-java's `perRpcBufferLimit`): 1 MiB. */
export const DEFAULT_PER_RPC_BUFFER_LIMIT = 1 << 20;

/** grpc-js's default for `grpc.retry_buffer_size` (grpc-java's `retryBufferSize`): 16 MiB. */
export const DEFAULT_RETRY_BUFFER_SIZE = 1 << 24;

/**
 * @internal The bytes held for replay by the calls of one interceptor (gRFC A6, "Memory
 * Management (Buffering)": "the client will need to buffer the messages sent … until the RPC is
 * committed", with a limit per RPC and one across RPCs). grpc-js keeps one per channel; an
 * interceptor is the nearest thing it can see. Counting is in serialized message bytes, as
 * grpc-js counts.
 */
export class RetryBufferPool {
  #used = 0;
  constructor(
    /** The most all calls may hold at once, in bytes. */
    readonly retryBufferSize: number,
    /** The most one call may hold, in bytes. */
    readonly perRpcBufferLimit: number,
  ) {}
  /** The bytes held now by every call of the pool. */
  get used(): number {
    return this.#used;
  }
  /** A call's share of the pool. */
  call(): CallRetryBuffer {
    return new CallRetryBuffer(this);
  }
  /** @internal */
  take(held: number, size: number): boolean {
    if (this.perRpcBufferLimit - held < size || this.retryBufferSize - this.#used < size) return false;
    this.#used += size;
    return true;
  }
  /** @internal */
  give(size: number): void {
    this.#used -= size;
  }
}

/**
 * @internal What one call holds for replay. Once `hold` refuses a message, the call must be
 * committed (A6: "If the RPC exceeds [the buffer], … the RPC is committed"); `release` returns
 * bytes to the pool as messages are no longer needed.
 */
export class CallRetryBuffer {
  #held = 0;
  constructor(private readonly pool: RetryBufferPool) {}
  /** The bytes this call holds. */
  get held(): number {
    return this.#held;
  }
  /** Holds `size` more bytes if both limits allow it; false (nothing held) if not. */
  hold(size: number): boolean {
    if (!this.pool.take(this.#held, size)) return false;
    this.#held += size;
    return true;
  }
  /** Gives back `size` bytes (a message the committed attempt has sent). */
  release(size: number): void {
    const n = Math.min(size, this.#held);
    this.#held -= n;
    this.pool.give(n);
  }
  /** Gives back everything (the call ended). */
  releaseAll(): void {
    this.pool.give(this.#held);
    this.#held = 0;
  }
}
