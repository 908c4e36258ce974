import { Metadata, status as Status } from '@grpc/grpc-js';
import type { InterceptingCall, InterceptorOptions, InterceptingListener, NextCall, StatusObject } from '@grpc/grpc-js';
import { GrpcCallRetry } from '../grpc/call-retry.js';
import type { GrpcMethodPlan, GrpcRetryPlanner } from '../grpc/interceptor-options.js';
import { GRPC_PUSHBACK_HEADER } from '../grpc/pushback.js';
import type { CallRetryBuffer } from '../grpc/retry-buffer.js';

/** The header that tells the server how many attempts came before this one (gRFC A6). */
const PREVIOUS_ATTEMPTS = 'grpc-previous-rpc-attempts';

/** @internal The call interface grpc-js's interceptors implement. */
export type Call = ConstructorParameters<typeof InterceptingCall>[0];
type MessageContext = Parameters<Call['sendMessageWithContext']>[0];

function deadlineRemainingMs(deadline: InterceptorOptions['deadline']): number {
  if (deadline === undefined || deadline === Infinity) return Infinity;
  // grpc-js deadlines are wall-clock (a Date or ms since the epoch): the only reading of Date here.
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(at) ? at - Date.now() : Infinity;
}

/** One thing the application asked to send: a request message, or the half-close after the last. */
interface Entry {
  readonly message: { readonly context: MessageContext; readonly value: unknown } | undefined;
  /** Serialized bytes held in the retry buffer (0 when not held). */
  held: number;
  /** The application's write callback, while it waits for the committed attempt to send this. */
  callback: (() => void) | undefined;
}

/** One attempt, and how far it has got through the entries. */
interface Attempt {
  readonly call: Call;
  /** The index of the next entry to send. */
  next: number;
  /** A message was handed to the call and its write has not completed. */
  writing: boolean;
  /** The half-close was sent (right after the last message, as grpc-js does). */
  halfClosed: boolean;
}

const ENDED_STATUS = 'the response had begun (headers or a message arrived): gRFC A6 does not retry a committed call';

/**
 * @internal The call the application sees: it runs attempts through `nextCall` and keeps what the application
 * sends (every request message, and the half-close) in a replay buffer until the call commits, so
 * that a retry resends it all, in order (gRFC A6, "When Retries are Valid"). The call commits when
 * response headers or a message arrive, when the call ends, or when the request outgrows the retry
 * buffer (`perRpcBufferLimit`, `retryBufferSize`): the attempt in flight goes on, and no attempt
 * follows. Once committed, what the committed attempt has sent is dropped from the buffer.
 */
export class RetryingCall implements Call {
  #listener: Partial<InterceptingListener> | undefined;
  #metadata: Metadata | undefined;
  /** What the application sent; `#entries[0]` has index `#offset`. */
  #entries: Entry[] = [];
  #offset = 0;
  #readPending = false;
  /** Why no further attempt may start, once one of A6's commit events happened. */
  #committed: string | undefined;
  #cancelled = false;
  #done = false;
  #attempt: Attempt | undefined;
  #timer: unknown;
  /** The last failed attempt's status, while a backoff wait runs. */
  #lastStatus: StatusObject | undefined;
  #held: { message: unknown } | undefined;
  readonly #unary: boolean;
  readonly #retry: GrpcCallRetry;
  readonly #buffer: CallRetryBuffer;

  constructor(
    private readonly planner: GrpcRetryPlanner,
    plan: GrpcMethodPlan,
    private readonly options: InterceptorOptions,
    private readonly nextCall: NextCall,
  ) {
    this.#unary = !options.method_definition.responseStream;
    this.#retry = new GrpcCallRetry(planner, plan, options.method_definition.path, deadlineRemainingMs(options.deadline));
    this.#buffer = planner.buffers.call();
  }

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.#metadata = metadata;
    this.#listener = listener;
    this.#startAttempt();
  }

  #startAttempt(): void {
    const number = this.#retry.attempt;
    const call = this.nextCall(this.options);
    const attempt: Attempt = { call, next: this.#offset, writing: false, halfClosed: false };
    this.#attempt = attempt;
    const metadata = this.#metadata!.clone();
    if (number > 1) metadata.set(PREVIOUS_ATTEMPTS, String(number - 1));
    this.#retry.started();
    call.start(metadata, {
      onReceiveMetadata: (md) => {
        if (this.#attempt !== attempt) return;
        this.#commit(ENDED_STATUS);
        this.#listener?.onReceiveMetadata?.(md);
      },
      onReceiveMessage: (message) => {
        if (this.#attempt !== attempt) return;
        if (this.#unary) {
          // grpc-js hands a single-response call its message (or null, when none came) just
          // before the status: hold it until the status says whether this attempt is the last.
          this.#held = { message };
          return;
        }
        this.#commit(ENDED_STATUS);
        this.#readPending = false;
        this.#listener?.onReceiveMessage?.(message);
      },
      onReceiveStatus: (status) => {
        if (this.#attempt !== attempt) return;
        this.#attempt = undefined;
        this.#onStatus(status);
      },
    });
    this.#pump(attempt);
    if (this.#readPending) call.startRead();
  }

  /**
   * Sends the attempt its next entry, one message at a time: grpc-js's lower layers hold a single
   * pending message until its write completes, so the next one waits for the write callback.
   */
  #pump(attempt: Attempt): void {
    while (!attempt.writing && this.#attempt === attempt) {
      const entry = this.#entries[attempt.next - this.#offset];
      if (entry === undefined) return;
      const index = attempt.next;
      if (entry.message === undefined) {
        attempt.next++;
        if (!attempt.halfClosed) attempt.call.halfClose();
        attempt.halfClosed = true;
        continue;
      }
      attempt.writing = true;
      const callback = (): void => {
        if (this.#attempt !== attempt) return;
        attempt.writing = false;
        attempt.next = index + 1;
        const waiting = entry.callback;
        entry.callback = undefined;
        this.#dropSent();
        waiting?.();
        this.#pump(attempt);
      };
      attempt.call.sendMessageWithContext({ ...entry.message.context, callback }, entry.message.value);
      // The half-close right behind the last message goes at once, as grpc-js sends it: the
      // lower layers keep it until the message is written.
      const after = this.#entries[index + 1 - this.#offset];
      if (after !== undefined && after.message === undefined && !attempt.halfClosed) {
        attempt.halfClosed = true;
        attempt.call.halfClose();
      }
    }
  }

  /** gRFC A6's commit: no attempt follows this one, and what it has sent leaves the buffer. */
  #commit(reason: string): void {
    if (this.#committed !== undefined) return;
    this.#committed = reason;
    this.#dropSent();
  }

  /**
   * Once committed, the entries the committed attempt has sent are not needed again ("each
   * subsequent message that is replayed can be freed as soon as it is sent", A6).
   */
  #dropSent(): void {
    if (this.#committed === undefined) return;
    const sent = this.#attempt === undefined ? this.#offset + this.#entries.length : this.#attempt.next;
    while (this.#offset < sent && this.#entries.length > 0) {
      this.#buffer.release(this.#entries.shift()!.held);
      this.#offset++;
    }
  }

  #finish(status: StatusObject): void {
    if (this.#done) return;
    this.#done = true;
    this.#attempt = undefined;
    this.#commit(ENDED_STATUS);
    this.#entries = [];
    this.#buffer.releaseAll();
    const held = this.#held;
    this.#held = undefined;
    if (held !== undefined) this.#listener?.onReceiveMessage?.(held.message);
    this.#listener?.onReceiveStatus?.(status);
  }

  #onStatus(status: StatusObject): void {
    if (status.code === Status.OK) {
      this.#retry.succeeded();
      this.#finish(status);
      return;
    }
    if (this.#cancelled) {
      this.#retry.gaveUp(status.code, 'aborted', 'the caller cancelled the call');
      this.#finish(status);
      return;
    }
    if (this.#committed !== undefined) {
      this.#retry.gaveUp(status.code, 'committed', this.#committed);
      this.#finish(status);
      return;
    }
    const command = this.#retry.failed(status.code, status.metadata.get(GRPC_PUSHBACK_HEADER));
    if (command.kind === 'give-up') {
      this.#finish(status);
      return;
    }
    this.#held = undefined;
    this.#lastStatus = status;
    const { clock } = this.planner;
    const run = (): void => {
      this.#timer = undefined;
      this.#lastStatus = undefined;
      if (!this.#done) this.#startAttempt();
    };
    if (command.delayMs === 0) run();
    else this.#timer = clock.setTimeout(run, command.delayMs);
  }

  /** The serialized size of a request message: what the buffer holds, in grpc-js's measure. */
  #sizeOf(message: unknown): number {
    try {
      return (this.options.method_definition.requestSerialize(message) as Uint8Array).length;
    } catch {
      // The attempt's own serialization fails the same way and ends the call (INTERNAL).
      return 0;
    }
  }

  sendMessageWithContext(context: MessageContext, message: unknown): void {
    if (this.#done) return;
    let held = 0;
    let callback = context.callback;
    if (this.#committed === undefined) {
      const size = this.#sizeOf(message);
      if (this.#buffer.hold(size)) {
        held = size;
        // Held for replay: the application may write the next message (grpc-js acknowledges a
        // buffered write on the next tick, before the attempt has sent it).
        if (callback !== undefined) process.nextTick(callback);
        callback = undefined;
      } else {
        this.#overflow();
      }
    }
    this.#entries.push({ message: { context: { flags: context.flags }, value: message }, held, callback });
    if (this.#attempt !== undefined) this.#pump(this.#attempt);
  }

  /** The request outgrew the retry buffer: commit to the attempt in flight, or end the call if none is. */
  #overflow(): void {
    const { perRpcBufferLimit, retryBufferSize } = this.planner.buffers;
    this.#commit(
      `the request outgrew the retry buffer (perRpcBufferLimit ${perRpcBufferLimit}, retryBufferSize ${retryBufferSize} bytes): gRFC A6 commits the call`,
    );
    const last = this.#lastStatus;
    if (this.#attempt !== undefined || last === undefined) return;
    // Between attempts: no retry can follow, so the last failure ends the call now.
    this.planner.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#retry.gaveUp(last.code, 'committed', this.#committed!);
    this.#finish(last);
  }

  sendMessage(message: unknown): void {
    this.sendMessageWithContext({}, message);
  }

  startRead(): void {
    this.#readPending = true;
    this.#attempt?.call.startRead();
  }

  halfClose(): void {
    if (this.#done) return;
    this.#entries.push({ message: undefined, held: 0, callback: undefined });
    if (this.#attempt !== undefined) this.#pump(this.#attempt);
  }

  cancelWithStatus(code: Status, details: string): void {
    if (this.#done) return;
    const attempt = this.#attempt;
    if (attempt !== undefined) {
      // Its status (CANCELLED) comes back through onReceiveStatus and ends the call: no retry.
      this.#cancelled = true;
      this.#commit('the caller cancelled the call');
      attempt.call.cancelWithStatus(code, details);
      return;
    }
    if (this.#timer !== undefined) this.planner.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#retry.gaveUp(code, 'aborted', 'the caller cancelled the call during a backoff wait');
    this.#finish({ code, details, metadata: new Metadata() });
  }

  getPeer(): string {
    return this.#attempt?.call.getPeer() ?? '';
  }

  getAuthContext(): ReturnType<Call['getAuthContext']> {
    return this.#attempt?.call.getAuthContext() ?? null;
  }
}
