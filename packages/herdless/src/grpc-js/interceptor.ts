import { InterceptingCall, Metadata, status as Status } from '@grpc/grpc-js';
import type { Interceptor, InterceptorOptions, InterceptingListener, NextCall, StatusObject } from '@grpc/grpc-js';
import { InvalidOptionError } from '../core/errors.js';
import { GrpcCallRetry } from '../grpc/call-retry.js';
import { grpcRetryPlanner, type GrpcMethodPlan, type GrpcRetryInterceptorOptions, type GrpcRetryPlanner } from '../grpc/interceptor-options.js';
import { GRPC_PUSHBACK_HEADER } from '../grpc/pushback.js';

const OWNER = 'grpcRetryInterceptor';

/** The header that tells the server how many attempts came before this one (gRFC A6). */
const PREVIOUS_ATTEMPTS = 'grpc-previous-rpc-attempts';

/** Options of {@link grpcRetryInterceptor}: the shared gRPC interceptor options, plus `target`. */
export interface GrpcJsRetryInterceptorOptions extends GrpcRetryInterceptorOptions {
  /**
   * The channel's target (e.g. `'dns:///api.example.com:443'` or `'127.0.0.1:50051'`), the server
   * name whose `retryThrottling` bucket the calls share (gRFC A6: one per server name, across
   * channels). Required when `serviceConfig` has `retryThrottling`: a grpc-js interceptor cannot
   * see its channel's target.
   */
  target?: string | undefined;
}

type Call = ConstructorParameters<typeof InterceptingCall>[0];
type MessageContext = Parameters<Call['sendMessageWithContext']>[0];

function deadlineRemainingMs(deadline: InterceptorOptions['deadline']): number {
  if (deadline === undefined || deadline === Infinity) return Infinity;
  // grpc-js deadlines are wall-clock (a Date or ms since the epoch): the only reading of Date here.
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(at) ? at - Date.now() : Infinity;
}

/**
 * The call the application sees: it runs attempts through `nextCall`, buffering the request (one
 * message, unary or server-streaming) until the call commits — gRFC A6: once response headers or
 * a message arrive, or the call ends, no attempt follows.
 */
class RetryingCall implements Call {
  #listener: Partial<InterceptingListener> | undefined;
  #metadata: Metadata | undefined;
  #message: { context: MessageContext; value: unknown } | undefined;
  #halfClosed = false;
  #readPending = false;
  #committed = false;
  #cancelled = false;
  #done = false;
  #current: Call | undefined;
  #timer: unknown;
  #held: { message: unknown } | undefined;
  /** The status of the last failed attempt, for a retry the throttle refuses. */
  #lastStatus: StatusObject | undefined;
  readonly #unary: boolean;
  readonly #retry: GrpcCallRetry;

  constructor(
    private readonly planner: GrpcRetryPlanner,
    plan: GrpcMethodPlan,
    private readonly options: InterceptorOptions,
    private readonly nextCall: NextCall,
  ) {
    this.#unary = !options.method_definition.responseStream;
    this.#retry = new GrpcCallRetry(planner, plan, options.method_definition.path, deadlineRemainingMs(options.deadline));
  }

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.#metadata = metadata;
    this.#listener = listener;
    this.#startAttempt();
  }

  #startAttempt(): void {
    const attempt = this.#retry.attempt;
    const last = this.#lastStatus;
    if (!this.#retry.admit(last === undefined ? Status.UNAVAILABLE : last.code)) {
      // Not sent: the call ends with the last attempt's status, or UNAVAILABLE before any — after
      // start() returns, as grpc-js delivers its own statuses.
      const status = last ?? { code: Status.UNAVAILABLE, details: 'adaptive throttling rejected the call locally', metadata: new Metadata() };
      queueMicrotask(() => this.#finish(status));
      return;
    }
    const call = this.nextCall(this.options);
    this.#current = call;
    const metadata = this.#metadata!.clone();
    if (attempt > 1) metadata.set(PREVIOUS_ATTEMPTS, String(attempt - 1));
    this.#retry.started();
    call.start(metadata, {
      onReceiveMetadata: (md) => {
        if (this.#current !== call) return;
        this.#commit();
        this.#listener?.onReceiveMetadata?.(md);
      },
      onReceiveMessage: (message) => {
        if (this.#current !== call) return;
        if (this.#unary) {
          // grpc-js hands a unary call its message (or null, when none came) just before the
          // status: hold it until the status says whether this attempt is the call's last.
          this.#held = { message };
          return;
        }
        this.#commit();
        this.#readPending = false;
        this.#listener?.onReceiveMessage?.(message);
      },
      onReceiveStatus: (status) => {
        if (this.#current !== call) return;
        this.#onStatus(status);
      },
    });
    if (this.#message !== undefined) call.sendMessageWithContext(this.#message.context, this.#message.value);
    if (this.#halfClosed) call.halfClose();
    if (this.#readPending) call.startRead();
  }

  /** No more attempts: drop the buffered request. */
  #commit(): void {
    this.#committed = true;
    this.#message = undefined;
  }

  #finish(status: StatusObject): void {
    if (this.#done) return;
    this.#done = true;
    this.#current = undefined;
    this.#commit();
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
    if (this.#committed) {
      this.#retry.gaveUp(status.code, 'committed', 'the response had begun (headers or a message arrived): gRFC A6 does not retry a committed call');
      this.#finish(status);
      return;
    }
    const command = this.#retry.failed(status.code, status.metadata.get(GRPC_PUSHBACK_HEADER));
    if (command.kind === 'give-up') {
      this.#finish(status);
      return;
    }
    this.#current = undefined;
    this.#held = undefined;
    this.#lastStatus = status;
    const { clock } = this.planner;
    const run = (): void => {
      this.#timer = undefined;
      if (!this.#done) this.#startAttempt();
    };
    if (command.delayMs === 0) run();
    else this.#timer = clock.setTimeout(run, command.delayMs);
  }

  sendMessageWithContext(context: MessageContext, message: unknown): void {
    if (!this.#committed) this.#message = { context, value: message };
    this.#current?.sendMessageWithContext(context, message);
  }

  sendMessage(message: unknown): void {
    this.sendMessageWithContext({}, message);
  }

  startRead(): void {
    this.#readPending = true;
    this.#current?.startRead();
  }

  halfClose(): void {
    this.#halfClosed = true;
    this.#current?.halfClose();
  }

  cancelWithStatus(code: Status, details: string): void {
    if (this.#done) return;
    const current = this.#current;
    if (current !== undefined) {
      // Its status (CANCELLED) comes back through onReceiveStatus and ends the call: no retry.
      this.#cancelled = true;
      this.#commit();
      current.cancelWithStatus(code, details);
      return;
    }
    if (this.#timer !== undefined) this.planner.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#retry.gaveUp(code, 'aborted', 'the caller cancelled the call during a backoff wait');
    this.#finish({ code, details, metadata: new Metadata() });
  }

  getPeer(): string {
    return this.#current?.getPeer() ?? '';
  }

  getAuthContext(): ReturnType<Call['getAuthContext']> {
    return this.#current?.getAuthContext() ?? null;
  }
}

/**
 * A grpc-js client interceptor that retries calls as gRFC A6 ("gRPC Retry Design") says, with
 * herdless's policies: the retryable status codes, `maxAttempts` (the first try included; a
 * service config's is capped at 5), the backoff (gRPC's ±20% jitter for a service config), one
 * `retryThrottling` bucket per server name shared by every channel to it, the call's deadline
 * spanning all attempts (a wait that would cross it is not started: the last status is returned at
 * once), `grpc-previous-rpc-attempts` on each retry, and the server's pushback
 * (`grpc-retry-pushback-ms`: a non-negative integer replaces the backoff for that retry, which
 * then restarts from `initialBackoff`; a negative or malformed value means "do not retry").
 *
 * A6's commit rule holds: once response headers or a message have arrived, the call is committed
 * and a later failure is returned, not retried. Unary and server-streaming calls are retried;
 * client-streaming and bidi calls pass through untouched. The caller sees the last attempt's status,
 * as without the interceptor. Turn grpc-js's own retries off (`'grpc.enable_retries': 0`) so that
 * calls are not retried twice.
 *
 * @param options see {@link GrpcJsRetryInterceptorOptions}.
 * @throws InvalidOptionError (at once) naming the field and the value: an unknown option; a
 *   service config grpc-js would reject (the field is its JSON path, e.g.
 *   `serviceConfig.methodConfig[0].retryPolicy.maxAttempts`); `serviceConfig` with policy options;
 *   a `retryThrottling` without `target`.
 * @example
 * ```ts
 * import { credentials } from '@grpc/grpc-js';
 * import { grpcRetryInterceptor } from 'herdless/grpc-js';
 *
 * const target = 'dns:///greeter.internal:50051';
 * const client = new GreeterClient(target, credentials.createInsecure(), {
 *   'grpc.enable_retries': 0,
 *   interceptors: [grpcRetryInterceptor({ target, serviceConfig })],
 * });
 * ```
 */
export function grpcRetryInterceptor(options: GrpcJsRetryInterceptorOptions): Interceptor {
  const planner = grpcRetryPlanner(OWNER, options, ['target']);
  const target = options.target;
  if (target !== undefined && (typeof target !== 'string' || target === '')) {
    throw new InvalidOptionError(OWNER, 'target', target, 'must be a non-empty string (the channel target)');
  }
  if (planner.throttled && target === undefined) {
    throw new InvalidOptionError(OWNER, 'target', target, 'is required with retryThrottling (the throttle is kept per server name)');
  }
  return (callOptions: InterceptorOptions, nextCall: NextCall) => {
    const definition = callOptions.method_definition;
    // A6 buffers a client stream to replay it; herdless retries single-request calls only.
    if (definition.requestStream) return new InterceptingCall(nextCall(callOptions));
    const plan = planner.planFor(definition.path, target);
    if (plan.policy.maxAttempts <= 1 && plan.policy.budget === undefined && planner.throttle === undefined) return new InterceptingCall(nextCall(callOptions));
    return new InterceptingCall(new RetryingCall(planner, plan, callOptions, nextCall));
  };
}
