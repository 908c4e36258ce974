import { Metadata, status as Status } from '@grpc/grpc-js';
import type { InterceptorOptions, InterceptingListener, NextCall, StatusObject } from '@grpc/grpc-js';
import { isCircuitOpenError } from '../core/breaker/circuit-open-error.js';
import { markDoNotRetry } from '../core/classify/hints.js';
import { HerdlessError } from '../core/errors.js';
import { GrpcHedgeReporter, isThrottledUnsent, THROTTLED_DETAILS } from '../grpc/hedge-report.js';
import type { GrpcMethodPlan, GrpcRetryPlanner } from '../grpc/interceptor-options.js';
import { GRPC_PUSHBACK_HEADER, parseGrpcPushback } from '../grpc/pushback.js';
import { hedge } from '../runtime/hedge.js';
import type { CircuitBreaker } from '../runtime/breaker.js';
import type { AttemptContext } from '../runtime/telemetry.js';
import type { Call } from './retrying-call.js';

/** The header that tells the server how many attempts came before this one (gRFC A6). */
const PREVIOUS_ATTEMPTS = 'grpc-previous-rpc-attempts';

type MessageContext = Parameters<Call['sendMessageWithContext']>[0];

/** A hedged attempt that ended with a status other than OK, before it committed. */
class AttemptStatusError extends HerdlessError {
  readonly grpcCode: number;
  readonly retryAfterMs?: number;
  constructor(readonly status: StatusObject) {
    super('ERR_HERDLESS_GRPC_STATUS', `gRPC status ${status.code}: ${status.details}`);
    this.grpcCode = status.code;
    const pushback = parseGrpcPushback(status.metadata.get(GRPC_PUSHBACK_HEADER));
    // gRFC A6: a pushback delays the next hedge; a negative or malformed one stops hedging.
    if (pushback === 'do-not-retry') markDoNotRetry(this);
    else if (pushback !== undefined) this.retryAfterMs = pushback;
  }
}

/** A failed attempt's status code, or `undefined` for anything else. */
function codeOf(outcome: unknown): number | undefined {
  return outcome instanceof AttemptStatusError ? outcome.grpcCode : undefined;
}

/** One attempt: its call, its events (buffered until it wins, then replayed and passed on live), and how far it has sent the request. */
class HedgeAttempt {
  events: (() => void)[] | undefined = [];
  /** The request entries this attempt has written (a request stream's messages and half-close). */
  sent = 0;
  /** A message is being written: the next waits for its callback (grpc-js's flow control). */
  writing = false;
  /** False once it lost, failed or was cancelled: nothing more is written to it. */
  live = true;
  constructor(
    readonly call: Call,
    readonly number: number,
    /** Commits the call to this attempt (its `hedge()` promise resolves with it). */
    readonly commit: () => void,
  ) {}
  emit(event: () => void): void {
    if (this.events === undefined) event();
    else this.events.push(event);
  }
  /** This attempt is the call's: replay what it received, then pass events on as they come. */
  win(): void {
    const events = this.events ?? [];
    this.events = undefined;
    for (const event of events) event();
  }
}

/** One part of a request stream, kept for the hedges: a message (with the application's write callback, while it waits for the committed attempt), or the half-close. */
interface Entry {
  readonly message?: { readonly flags: number | undefined; readonly value: unknown };
  callback?: (() => void) | undefined;
}

/**
 * @internal A call hedged by its service config's `hedgingPolicy` (gRFC A6, "Hedging Policy"):
 * `hedge()` runs the attempts — the first at once, the next `hedgingDelay` later (or at once after
 * a status in `nonFatalStatusCodes`, or after the server's pushback), up to `maxAttempts`, each
 * carrying `grpc-previous-rpc-attempts`, every hedge admitted by the `retryThrottling` bucket. The
 * first attempt to receive response headers, or an OK status, commits the call (A6: "once response
 * headers are received from a hedged request, that request is committed"): the others are
 * cancelled, and the committed attempt's metadata, messages and status go to the application as
 * they come, whatever its status. Another status ends the call (fatal), or starts the next hedge.
 *
 * The request is kept in the retry buffer until the call commits, and each hedge replays it: a
 * unary or server-streaming call's one message (the attempts start at the half-close); a client or
 * bidi stream's messages and half-close as the application writes them (the first attempt starts
 * at once, and each new message goes to every attempt in flight, each written after the last one's
 * write callback). A request that outgrows the buffer commits the call (A6, "Memory Management"):
 * to the attempt in flight that has sent the most — the others are cancelled and no hedge follows —
 * or, with none in flight, the last status ends the call; the message that overflowed is
 * acknowledged once the committed attempt has sent it.
 */
export class HedgingCall implements Call {
  #listener: Partial<InterceptingListener> | undefined;
  #metadata: Metadata | undefined;
  /**
   * The request as the application wrote it, from entry `#offset` on: once the call is committed,
   * what the committed attempt has written is let go, so a long stream holds only what is unsent.
   */
  readonly #entries: Entry[] = [];
  #offset = 0;
  #halfClosed = false;
  #readPending = false;
  #started = false;
  #done = false;
  readonly #attempts: HedgeAttempt[] = [];
  readonly #caller = new AbortController();
  /** The attempt the call is committed to, as soon as it is chosen (the `hedge()` winner a microtask later). */
  #chosen: HedgeAttempt | undefined;
  #winner: HedgeAttempt | undefined;
  /** The application cancelled the call. */
  #cancelled = false;
  /** The last failed attempt's status (what ends the call if the buffer overflows between attempts). */
  #lastStatus: StatusObject | undefined;
  readonly #stream: boolean;
  readonly #report: GrpcHedgeReporter;

  constructor(
    planner: GrpcRetryPlanner,
    plan: GrpcMethodPlan,
    private readonly options: InterceptorOptions,
    private readonly nextCall: NextCall,
    breaker: CircuitBreaker | undefined,
  ) {
    this.#report = new GrpcHedgeReporter(planner, plan, options.method_definition.path, codeOf, undefined, breaker);
    this.#stream = options.method_definition.requestStream;
  }

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.#metadata = metadata;
    this.#listener = listener;
    // A request stream is sent as it is written: the first attempt starts now.
    if (this.#stream) {
      this.#started = true;
      this.#run();
    }
  }

  sendMessageWithContext(context: MessageContext, message: unknown): void {
    if (this.#done) return;
    const entry: Entry = { message: { flags: context.flags, value: message } };
    if (this.#chosen === undefined && this.#report.hold(this.#sizeOf(message))) {
      // Held for replay: the application may write the next message (grpc-js acknowledges a
      // buffered write on the next tick, before an attempt has sent it).
      if (context.callback !== undefined) process.nextTick(context.callback);
    } else {
      // Committed (or committing now): acknowledged when the committed attempt has sent it.
      entry.callback = context.callback;
    }
    this.#entries.push(entry);
    if (this.#chosen === undefined && this.#report.overflowed) this.#overflow();
    this.#pumpAll();
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

  sendMessage(message: unknown): void {
    this.sendMessageWithContext({}, message);
  }

  halfClose(): void {
    // Once: a second half-close (or one after the call ended) is ignored.
    if (this.#done || this.#halfClosed) return;
    this.#halfClosed = true;
    this.#entries.push({});
    if (this.#stream) return this.#pumpAll();
    if (this.#started) return;
    this.#started = true;
    this.#run();
  }

  startRead(): void {
    this.#readPending = true;
    for (const attempt of this.#attempts) attempt.call.startRead();
  }

  #run(): void {
    const report = this.#report;
    hedge<HedgeAttempt>(({ attempt, signal }, traced?: AttemptContext) => this.#attempt(attempt, signal, traced), report.options(this.#caller.signal)).then(
      (winner) => {
        this.#winner = winner;
        report.release();
        winner.win();
      },
      (error: unknown) => {
        if (this.#done) return;
        const aborted = this.#caller.signal.aborted;
        const reason = aborted ? (this.#caller.signal.reason as StatusObject) : undefined;
        if (reason !== undefined && reason === this.#lastStatus) {
          // The request outgrew the buffer between attempts: the last status is the call's.
          report.overflowEnded(reason.code);
          return this.#finish(reason);
        }
        const code = report.gaveUp(error, reason?.code);
        // Every attempt failed before committing: the last status is the call's (A6).
        const cause = (error as { cause?: unknown } | null)?.cause;
        if (reason !== undefined) this.#finish(reason);
        else if (cause instanceof AttemptStatusError) this.#finish(cause.status);
        else if (isCircuitOpenError(cause)) this.#finish({ code: Status.UNAVAILABLE, details: cause.message, metadata: new Metadata() });
        else if (isThrottledUnsent(error)) this.#finish({ code: Status.UNAVAILABLE, details: THROTTLED_DETAILS, metadata: new Metadata() });
        else this.#finish({ code, details: `herdless hedging: ${error instanceof Error ? error.message : String(error)}`, metadata: new Metadata() });
      },
    );
  }

  /**
   * The request outgrew the retry buffer before the call committed: commit to the attempt in flight
   * that has sent the most (A6), or, with none in flight, end the call with the last status.
   */
  #overflow(): void {
    let best: HedgeAttempt | undefined;
    for (const attempt of this.#attempts) if (attempt.live && (best === undefined || attempt.sent > best.sent)) best = attempt;
    if (best !== undefined) {
      this.#chosen = best;
      best.commit();
    } else if (this.#lastStatus !== undefined) {
      this.#caller.abort(this.#lastStatus);
    }
  }

  /** Writes what each attempt in flight has not sent yet. */
  #pumpAll(): void {
    for (const attempt of this.#attempts) this.#pump(attempt);
  }

  /**
   * Writes to `attempt` the request entries it has not sent: a unary request at once (one message
   * and the half-close); a stream's one message at a time, each after the last one's callback.
   */
  #pump(attempt: HedgeAttempt): void {
    const chosen = this.#chosen;
    while (attempt.live && !attempt.writing && attempt.sent < this.#offset + this.#entries.length && (chosen === undefined || chosen === attempt)) {
      const entry = this.#entries[attempt.sent - this.#offset]!;
      const message = entry.message;
      if (message === undefined) {
        attempt.sent++;
        attempt.call.halfClose();
        continue;
      }
      if (!this.#stream) {
        attempt.sent++;
        attempt.call.sendMessageWithContext({ flags: message.flags }, message.value);
        // A request too large for the buffer is sent by the one attempt: acknowledged once sent.
        if (entry.callback !== undefined) process.nextTick(entry.callback);
        entry.callback = undefined;
        continue;
      }
      attempt.writing = true;
      attempt.call.sendMessageWithContext(
        {
          flags: message.flags,
          callback: () => {
            attempt.writing = false;
            attempt.sent++;
            if (attempt === this.#chosen) {
              this.#letGo(attempt);
              if (entry.callback !== undefined) {
                const callback = entry.callback;
                entry.callback = undefined;
                callback();
              }
            }
            this.#pump(attempt);
          },
        },
        message.value,
      );
    }
  }

  /** Once committed, the entries the committed attempt has written are not needed again. */
  #letGo(committed: HedgeAttempt): void {
    while (this.#offset < committed.sent && this.#entries.length > 0) {
      this.#entries.shift();
      this.#offset++;
    }
  }

  /** Starts attempt `number` (inside its trace context, if any); resolves when it commits, rejects with its status if it ends first. */
  #attempt(number: number, signal: AbortSignal, traced: AttemptContext | undefined): Promise<HedgeAttempt> {
    this.#report.attempts = number;
    // Every attempt goes through the breaker: a refused one is not sent, and no hedge follows it.
    const ticket = this.#report.acquire();
    if (isCircuitOpenError(ticket)) return Promise.reject(ticket);
    return new Promise<HedgeAttempt>((resolve, reject) => {
      // A traced attempt is made and started inside its context, so that the layers below see it.
      const call = traced === undefined ? this.nextCall(this.options) : traced.run(() => this.nextCall(this.options));
      const attempt = new HedgeAttempt(call, number, () => resolve(attempt));
      this.#attempts.push(attempt);
      const metadata = this.#metadata!.clone();
      if (number > 1) metadata.set(PREVIOUS_ATTEMPTS, String(number - 1));
      traced?.inject((name, value) => metadata.set(name, value));
      let committed = false;
      const commit = (): void => {
        this.#chosen ??= attempt;
        resolve(attempt);
      };
      signal.addEventListener(
        'abort',
        () => {
          attempt.live = false;
          call.cancelWithStatus(Status.CANCELLED, 'herdless hedging: another attempt committed, or the call ended');
        },
        { once: true },
      );
      const listener: Partial<InterceptingListener> = {
        onReceiveMetadata: (md) => {
          committed = true;
          attempt.emit(() => this.#listener?.onReceiveMetadata?.(md));
          commit();
        },
        onReceiveMessage: (message) => {
          attempt.emit(() => this.#listener?.onReceiveMessage?.(message));
        },
        onReceiveStatus: (status) => {
          // OK is a success; a cancelled attempt (a loser, or the caller's cancel) is not counted.
          ticket?.(status.code === Status.OK ? { value: status } : !attempt.live || this.#cancelled ? 'ignored' : { error: status });
          if (committed || status.code === Status.OK || this.#chosen === attempt) {
            attempt.emit(() => {
              if (status.code !== Status.OK && !this.#done) this.#report.committedFailed(status.code, number, this.#cancelled);
              this.#finish(status);
            });
            commit();
          } else {
            attempt.live = false;
            attempt.events = [];
            this.#report.lastCode = status.code;
            this.#lastStatus = status;
            reject(new AttemptStatusError(status));
          }
        },
      };
      if (traced === undefined) call.start(metadata, listener);
      else traced.run(() => call.start(metadata, listener));
      this.#pump(attempt);
      if (this.#readPending) call.startRead();
    });
  }

  #finish(status: StatusObject): void {
    if (this.#done) return;
    this.#done = true;
    this.#report.release();
    this.#listener?.onReceiveStatus?.(status);
  }

  cancelWithStatus(code: Status, details: string): void {
    if (this.#done) return;
    this.#cancelled = true;
    const committed = this.#winner ?? this.#chosen;
    if (committed !== undefined) {
      // Committed: the attempt's own status (CANCELLED) comes back and ends the call.
      committed.call.cancelWithStatus(code, details);
      return;
    }
    if (!this.#started) {
      this.#finish({ code, details, metadata: new Metadata() });
      return;
    }
    this.#caller.abort({ code, details, metadata: new Metadata() } satisfies StatusObject);
  }

  getPeer(): string {
    return (this.#winner ?? this.#attempts[0])?.call.getPeer() ?? '';
  }

  getAuthContext(): ReturnType<Call['getAuthContext']> {
    return (this.#winner ?? this.#attempts[0])?.call.getAuthContext() ?? null;
  }
}
