import { Metadata, status as Status } from '@grpc/grpc-js';
import type { InterceptorOptions, InterceptingListener, NextCall, StatusObject } from '@grpc/grpc-js';
import { markDoNotRetry } from '../core/classify/hints.js';
import { HerdlessError } from '../core/errors.js';
import { GrpcHedgeReporter } from '../grpc/hedge-report.js';
import type { GrpcMethodPlan, GrpcRetryPlanner } from '../grpc/interceptor-options.js';
import { GRPC_PUSHBACK_HEADER, parseGrpcPushback } from '../grpc/pushback.js';
import { hedge } from '../runtime/hedge.js';
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

/** One attempt's events, buffered until it wins (then replayed to the application, and passed on live). */
class HedgeAttempt {
  events: (() => void)[] | undefined = [];
  constructor(
    readonly call: Call,
    readonly number: number,
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

/**
 * @internal A unary or server-streaming call hedged by its service config's `hedgingPolicy` (gRFC
 * A6, "Hedging Policy"): the request (one message and the half-close) is kept, and `hedge()` runs the attempts — the
 * first at once, the next `hedgingDelay` later (or at once after a status in
 * `nonFatalStatusCodes`, or after the server's pushback), up to `maxAttempts`, each carrying
 * `grpc-previous-rpc-attempts`, every hedge admitted by the `retryThrottling` bucket. The first
 * attempt to receive response headers, or an OK status, commits the call (A6: "once response
 * headers are received from a hedged request, that request is committed"): the others are
 * cancelled, and the committed attempt's metadata, messages and status go to the application as they
 * come, whatever its status. Another status ends the call (fatal), or starts the next hedge. A
 * server stream commits the same way, on its response headers: before them nothing of the response
 * has reached the application, so any attempt may still win (A6 allows hedging every kind of call
 * until it commits).
 */
export class HedgingCall implements Call {
  #listener: Partial<InterceptingListener> | undefined;
  #metadata: Metadata | undefined;
  #message: { readonly context: MessageContext; readonly value: unknown } | undefined;
  #readPending = false;
  #started = false;
  #done = false;
  readonly #attempts: HedgeAttempt[] = [];
  readonly #caller = new AbortController();
  #winner: HedgeAttempt | undefined;
  /** The application cancelled the call. */
  #cancelled = false;
  readonly #report: GrpcHedgeReporter;

  constructor(
    planner: GrpcRetryPlanner,
    plan: GrpcMethodPlan,
    private readonly options: InterceptorOptions,
    private readonly nextCall: NextCall,
  ) {
    this.#report = new GrpcHedgeReporter(planner, plan, options.method_definition.path, codeOf);
  }

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.#metadata = metadata;
    this.#listener = listener;
  }

  sendMessageWithContext(context: MessageContext, message: unknown): void {
    // A unary or server-streaming request: one message, replayed by every hedge and held in the
    // retry buffer until the call commits. Acknowledged on the next tick, as grpc-js acknowledges a
    // buffered write.
    this.#message = { context: { flags: context.flags }, value: message };
    this.#report.hold(this.#sizeOf(message));
    if (context.callback !== undefined) process.nextTick(context.callback);
  }

  /** The serialized size of the request message: what the buffer holds, in grpc-js's measure. */
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
    if (this.#started || this.#done) return;
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
        const code = report.gaveUp(error, aborted ? (this.#caller.signal.reason as StatusObject).code : undefined);
        // Every attempt failed before committing: the last status is the call's (A6).
        const cause = (error as { cause?: unknown } | null)?.cause;
        if (!aborted && cause instanceof AttemptStatusError) this.#finish(cause.status);
        else if (aborted) this.#finish(this.#caller.signal.reason as StatusObject);
        else this.#finish({ code, details: `herdless hedging: ${error instanceof Error ? error.message : String(error)}`, metadata: new Metadata() });
      },
    );
  }

  /** Starts attempt `number` (inside its trace context, if any); resolves when it commits, rejects with its status if it ends first. */
  #attempt(number: number, signal: AbortSignal, traced: AttemptContext | undefined): Promise<HedgeAttempt> {
    this.#report.attempts = number;
    return new Promise<HedgeAttempt>((resolve, reject) => {
      // A traced attempt is made and started inside its context, so that the layers below see it.
      const call = traced === undefined ? this.nextCall(this.options) : traced.run(() => this.nextCall(this.options));
      const attempt = new HedgeAttempt(call, number);
      this.#attempts.push(attempt);
      const metadata = this.#metadata!.clone();
      if (number > 1) metadata.set(PREVIOUS_ATTEMPTS, String(number - 1));
      traced?.inject((name, value) => metadata.set(name, value));
      let committed = false;
      signal.addEventListener('abort', () => call.cancelWithStatus(Status.CANCELLED, 'herdless hedging: another attempt committed, or the call ended'), { once: true });
      const listener: Partial<InterceptingListener> = {
        onReceiveMetadata: (md) => {
          committed = true;
          attempt.emit(() => this.#listener?.onReceiveMetadata?.(md));
          resolve(attempt);
        },
        onReceiveMessage: (message) => {
          attempt.emit(() => this.#listener?.onReceiveMessage?.(message));
        },
        onReceiveStatus: (status) => {
          if (committed || status.code === Status.OK) {
            attempt.emit(() => {
              if (status.code !== Status.OK && !this.#done) this.#report.committedFailed(status.code, number, this.#cancelled);
              this.#finish(status);
            });
            resolve(attempt);
          } else {
            attempt.events = [];
            this.#report.lastCode = status.code;
            reject(new AttemptStatusError(status));
          }
        },
      };
      if (traced === undefined) call.start(metadata, listener);
      else traced.run(() => call.start(metadata, listener));
      const message = this.#message;
      if (message !== undefined) call.sendMessageWithContext(message.context, message.value);
      call.halfClose();
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
    if (this.#winner !== undefined) {
      // Committed: the attempt's own status (CANCELLED) comes back and ends the call.
      this.#winner.call.cancelWithStatus(code, details);
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
