/**
 * The three HTTP clients herdless retries — the retrying fetch, the undici interceptor and the
 * axios adapter — behind one driver, so that one behaviour suite runs against each of them.
 */
import { Readable } from 'node:stream';
import axios from 'axios';
import { Agent, request } from 'undici';
import { type GiveUpReason } from 'herdless';
import { retryInfo, withRetry, type HttpRequestRetryOptions, type HttpRetryOptions } from 'herdless/http';
import { retryAdapter } from 'herdless/axios';
import { retryInterceptor } from 'herdless/undici';

/** One request, as the suite describes it. */
export interface ClientRequest {
  readonly method?: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  /** A string body, or `'stream'`: a one-shot stream of `chunks`. */
  readonly body?: string | { readonly stream: readonly string[] };
  readonly signal?: AbortSignal;
  /** Per-request options, given in the client's own idiom (fetch's third argument, undici's `retryOptions`, axios's `herdless`). */
  readonly retry?: HttpRequestRetryOptions;
}

/** What came back, the same shape for every client. */
export interface ClientOutcome {
  readonly status?: number;
  readonly body?: string;
  /** The rejection, when there is no response. */
  readonly error?: unknown;
  /** The give-up's reason, as `onGiveUp` heard it (`undefined` when the call accepted its response). */
  readonly reason: GiveUpReason | undefined;
}

export interface HttpClientDriver {
  readonly name: 'fetch' | 'undici' | 'axios';
  /** A client with these options; `send` performs one request. */
  make(options: HttpRetryOptions<never>): { send(request: ClientRequest): Promise<ClientOutcome>; close(): Promise<void> };
  /** True when `error` is how this client reports the caller's abort with `reason`. */
  isAbort(error: unknown, reason: unknown): boolean;
}

function withGiveUp(options: HttpRetryOptions<never>): { options: HttpRetryOptions<never>; reason: () => GiveUpReason | undefined; reset: () => void } {
  let reason: GiveUpReason | undefined;
  const user = options.onGiveUp;
  return {
    options: {
      ...options,
      onGiveUp: (event) => {
        reason = event.reason;
        return user?.(event);
      },
    },
    reason: () => reason,
    reset: () => void (reason = undefined),
  };
}

const streamOf = (chunks: readonly string[]): Readable => Readable.from(chunks.map((c) => Buffer.from(c)));

export function httpClients(origin: () => string): HttpClientDriver[] {
  return [
    {
      name: 'fetch',
      make(options) {
        const hook = withGiveUp(options);
        const api = withRetry(fetch, hook.options as HttpRetryOptions);
        return {
          async send(req) {
            hook.reset();
            let body: BodyInit | undefined;
            if (typeof req.body === 'string') body = req.body;
            else if (req.body !== undefined) body = Readable.toWeb(streamOf(req.body.stream)) as ReadableStream;
            const init: RequestInit & { duplex?: string } = { method: req.method ?? 'GET', headers: req.headers, signal: req.signal };
            if (body !== undefined) {
              init.body = body;
              if (typeof req.body !== 'string') init.duplex = 'half';
            }
            try {
              const res = await api(origin() + req.path, init, req.retry);
              const text = await res.text();
              if (retryInfo(res)?.reason !== hook.reason()) throw new Error(`retryInfo ${retryInfo(res)?.reason} ≠ onGiveUp ${hook.reason()}`);
              return { status: res.status, body: text, reason: hook.reason() };
            } catch (error) {
              return { error, reason: hook.reason() };
            }
          },
          close: async () => undefined,
        };
      },
      isAbort: (error, reason) => error === reason,
    },
    {
      name: 'undici',
      make(options) {
        const hook = withGiveUp(options);
        const agent = new Agent();
        const dispatcher = agent.compose(retryInterceptor(hook.options as never));
        return {
          async send(req) {
            hook.reset();
            const body = typeof req.body === 'string' ? req.body : req.body === undefined ? undefined : streamOf(req.body.stream);
            try {
              const res = await request(origin() + req.path, {
                method: (req.method ?? 'GET') as 'GET',
                headers: req.headers,
                body,
                signal: req.signal,
                dispatcher,
                ...(req.retry === undefined ? {} : { retryOptions: req.retry }),
              } as Parameters<typeof request>[1]);
              return { status: res.statusCode, body: await res.body.text(), reason: hook.reason() };
            } catch (error) {
              return { error, reason: hook.reason() };
            }
          },
          close: () => agent.close(),
        };
      },
      isAbort: (error, reason) => error === reason,
    },
    {
      name: 'axios',
      make(options) {
        const hook = withGiveUp(options);
        const instance = axios.create({ adapter: retryAdapter(hook.options as never), responseType: 'text', transformResponse: (data: unknown) => data });
        return {
          async send(req) {
            hook.reset();
            const data = typeof req.body === 'string' ? req.body : req.body === undefined ? undefined : streamOf(req.body.stream);
            try {
              const res = await instance.request({ url: origin() + req.path, method: req.method ?? 'GET', headers: req.headers, data, signal: req.signal, herdless: req.retry });
              return { status: res.status, body: String(res.data), reason: hook.reason() };
            } catch (error) {
              // axios semantics: a non-2xx response rejects, carrying the response.
              if (axios.isAxiosError(error) && error.response !== undefined) {
                if (retryInfo(error.response)?.reason !== hook.reason()) throw new Error(`retryInfo ≠ onGiveUp for ${error.response.status}`, { cause: error });
                return { status: error.response.status, body: String(error.response.data), reason: hook.reason() };
              }
              return { error, reason: hook.reason() };
            }
          },
          close: async () => undefined,
        };
      },
      isAbort: (error) => axios.isCancel(error),
    },
  ];
}
