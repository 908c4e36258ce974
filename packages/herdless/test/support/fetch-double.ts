/**
 * A scripted stand-in for `fetch`, for the rules of the HTTP adapters that are about what the
 * adapter does with a request and a response (headers, signals, bodies, events), not about the
 * network: each call takes the next step of the script and is recorded with the init it got. The
 * responses are real `Response` objects whose bodies record being cancelled.
 */

/** One answer: a status (with headers), a rejection, or a function of the call's init. */
export type FetchStep =
  | number
  | { readonly status: number; readonly headers?: Record<string, string>; readonly body?: string | null }
  | { readonly reject: unknown }
  | ((init: RequestInit | undefined, call: FetchCall) => Promise<Response> | Response);

/** One call the double received. */
export interface FetchCall {
  readonly input: unknown;
  readonly init: RequestInit | undefined;
  /** The response it answered with, when it answered. */
  response?: Response;
}

export interface FetchDouble {
  readonly fetch: (input: unknown, init?: RequestInit) => Promise<Response>;
  readonly calls: FetchCall[];
  /** The responses whose bodies were cancelled (discarded), in the order of the calls that made them. */
  cancelled(): boolean[];
  /** The request header `name` of each call (`null` when absent). */
  header(name: string): (string | null)[];
}

/** A response whose body is a stream that records being cancelled. */
export function trackedResponse(status: number, headers: Record<string, string> = {}, body: string | null = 'body'): Response & { readonly wasCancelled: () => boolean } {
  let cancelled = false;
  const stream =
    body === null
      ? null
      : new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(body));
            controller.close();
          },
          cancel() {
            cancelled = true;
          },
        });
  const response = new Response(stream, { status, headers });
  return Object.assign(response, { wasCancelled: () => cancelled });
}

export function fetchDouble(steps: readonly FetchStep[], fallback: FetchStep = 200): FetchDouble {
  const calls: FetchCall[] = [];
  let next = 0;
  const fetch = async (input: unknown, init?: RequestInit): Promise<Response> => {
    const call: FetchCall = { input, init };
    calls.push(call);
    const step = steps[next++] ?? fallback;
    let response: Response;
    if (typeof step === 'function') response = await step(init, call);
    else if (typeof step === 'number') response = trackedResponse(step);
    else if ('reject' in step) throw step.reject;
    else response = trackedResponse(step.status, step.headers, step.body === undefined ? 'body' : step.body);
    call.response = response;
    return response;
  };
  return {
    fetch,
    calls,
    cancelled: () => calls.map((c) => (c.response as { wasCancelled?: () => boolean } | undefined)?.wasCancelled?.() ?? false),
    header: (name) => calls.map((c) => new Headers(c.init?.headers ?? (typeof c.input === 'object' && c.input !== null ? (c.input as { headers?: HeadersInit }).headers : undefined)).get(name)),
  };
}

/** A network failure as Node's fetch reports it: a TypeError whose cause has an error code. */
export function connectionReset(): TypeError {
  return new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
}
