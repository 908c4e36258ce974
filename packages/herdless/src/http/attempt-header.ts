import type { HttpConfig } from './options.js';

/** The origin of the page or web worker this code runs in, or `undefined` outside a browser. */
function browserOrigin(): string | undefined {
  const origin = (globalThis as { location?: { origin?: unknown } }).location?.origin;
  return typeof origin === 'string' ? origin : undefined;
}

/**
 * @internal Whether `url` is cross-origin for a browser's page or web worker whose origin is
 * `origin`. A non-safelisted header turns a cross-origin request into a preflighted one (Fetch
 * standard, "CORS-safelisted request-header"), which a server that does not allow the header
 * refuses. Runtimes without a `location` (Node, Bun, Deno, Workers) apply no CORS to their own
 * requests: `origin` `undefined` is never cross-origin. An opaque origin (`'null'`: a sandboxed
 * frame, a `data:` page) makes every request cross-origin.
 */
export function crossOriginInBrowser(url: string, origin: string | undefined = browserOrigin()): boolean {
  if (origin === undefined) return false;
  try {
    // Stryker disable next-line ConditionalExpression,StringLiteral: 'null' is no base URL, so new URL(url, 'null') throws and the catch answers true as well; the check says it first
    return origin === 'null' || new URL(url, origin).origin !== origin;
  } catch {
    return true; // the client rejects an unparsable URL on its own
  }
}

/**
 * @internal The header a request's retries carry their attempt number in, or `undefined` for none.
 * The default header stays off cross-origin requests in a browser: a retry must not need a preflight
 * its first attempt did not (the preflight may be refused, which fails the retry like a dropped
 * connection). A header the caller named is sent everywhere. `url` is a function so that a client
 * whose URL costs work to build (axios serialises its params) builds it only in a browser.
 */
export function retryAttemptHeader(config: Pick<HttpConfig, 'attemptHeader' | 'attemptHeaderNamed'>, url: () => string, origin: string | undefined = browserOrigin()): string | undefined {
  if (config.attemptHeader === undefined || config.attemptHeaderNamed || origin === undefined) return config.attemptHeader;
  return crossOriginInBrowser(url(), origin) ? undefined : config.attemptHeader;
}
