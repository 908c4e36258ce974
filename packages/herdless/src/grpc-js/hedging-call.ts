import { Metadata, status as Status } from '@grpc/grpc-js';
import type { InterceptorOptions, InterceptingListener, NextCall, StatusObject } from '@grpc/grpc-js';
import { markDoNotRetry } from '../core/classify/hints.js';
import { HerdlessError } from '../core/errors.js';
import { isRetryError } from '../core/retry/errors.js';
import type { GrpcMethodPlan, GrpcRetryPlanner } from '../grpc/interceptor-options.js';
import { GRPC_PUSHBACK_HEADER, parseGrpcPushback } from '../grpc/pushback.js';
import { hedge } from '../runtime/hedge.js';
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

/** One attempt's events, buffered until it wins (then replayed to the application, and passed on live). */
class HedgeAttempt {
  events: (() => void)[] | undefined = [];
  constructor(readonly call: Call) {}
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
 * @internal A unary call hedged by its service config's `hedgingPolicy` (gRFC A6, "Hedging Policy"):
 * the request (one message and the half-close) is kept, and `hedge()` runs the attempts — the
 * first at once, the next `hedgingDelay` later (or at once after a status in
 * `nonFatalStatusCodes`, or after the server's pushback), up to `maxAttempts`, each carrying
 * `grpc-previous-rpc-attempts`, every hedge admitted by the `retryThrottling` bucket. The first
 * attempt to receive response headers, or an OK status, commits the call (A6: "once response
 * headers are received from a hedged request, that request is committed"): the others are
 * cancelled, and the committed attempt's metadata, message and status go to the application as they
 * come, whatever its status. Another status ends the call (fatal), or starts the next hedge.
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

  constructor(
    private readonly planner: GrpcRetryPlanner,
    private readonly plan: GrpcMethodPlan,
    private readonly options: InterceptorOptions,
    private readonly nextCall: NextCall,
  ) {}

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.#metadata = metadata;
    this.#listener = listener;
  }

  sendMessageWithContext(context: MessageContext, message: unknown): void {
    // A unary request: one message, replayed by every hedge. Acknowledged on the next tick, as
    // grpc-js acknowledges a buffered write.
    this.#message = { context: { flags: context.flags }, value: message };
    if (context.callback !== undefined) process.nextTick(context.callback);
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
    const { policy, nonFatal } = this.plan.hedging!;
    hedge<HedgeAttempt>(({ attempt, signal }) => this.#attempt(attempt, signal), {
      maxAttempts: policy.maxAttempts,
      delayMs: policy.hedgingDelayMs,
      budget: this.plan.policy.budget,
      retryable: (error) => error instanceof AttemptStatusError && nonFatal.has(error.grpcCode),
      maxRetryAfterMs: this.plan.policy.maxRetryAfterMs,
      clock: this.planner.clock,
      telemetry: this.planner.telemetry,
      onHookError: this.planner.options.onHookError,
      signal: this.#caller.signal,
    }).then(
      (winner) => {
        this.#winner = winner;
        winner.win();
      },
      (error: unknown) => {
        if (this.#done) return;
        // Every attempt failed before committing: the last status is the call's (A6).
        const cause = isRetryError(error) ? error.cause : undefined;
        if (cause instanceof AttemptStatusError) this.#finish(cause.status);
        else if (this.#caller.signal.aborted) this.#finish(this.#caller.signal.reason as StatusObject);
        else this.#finish({ code: Status.INTERNAL, details: `herdless hedging: ${error instanceof Error ? error.message : String(error)}`, metadata: new Metadata() });
      },
    );
  }

  /** Starts attempt `number`; resolves when it commits, rejects with its status if it ends first. */
  #attempt(number: number, signal: AbortSignal): Promise<HedgeAttempt> {
    return new Promise<HedgeAttempt>((resolve, reject) => {
      const call = this.nextCall(this.options);
      const attempt = new HedgeAttempt(call);
      this.#attempts.push(attempt);
      const metadata = this.#metadata!.clone();
      if (number > 1) metadata.set(PREVIOUS_ATTEMPTS, String(number - 1));
      let committed = false;
      signal.addEventListener('abort', () => call.cancelWithStatus(Status.CANCELLED, 'herdless hedging: another attempt committed, or the call ended'), { once: true });
      call.start(metadata, {
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
            attempt.emit(() => this.#finish(status));
            resolve(attempt);
          } else {
            attempt.events = [];
            reject(new AttemptStatusError(status));
          }
        },
      });
      const message = this.#message;
      if (message !== undefined) call.sendMessageWithContext(message.context, message.value);
      call.halfClose();
      if (this.#readPending) call.startRead();
    });
  }

  #finish(status: StatusObject): void {
    if (this.#done) return;
    this.#done = true;
    this.#listener?.onReceiveStatus?.(status);
  }

  cancelWithStatus(code: Status, details: string): void {
    if (this.#done) return;
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
