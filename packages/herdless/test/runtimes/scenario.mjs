// The failed-connection scenario every runtime runs with its own fetch (Node, Bun, Deno, chromium, a
// Workers-like bundle): plain JavaScript, so each runtime loads it as it is. `herdless` is the built
// main entry, handed in so this file imports nothing itself.
//
// 1. refused: nothing listens at `refusedUrl`; withRetry(fetch) must try maxAttempts (3) times and
//    give up with reason 'exhausted' and the runtime's own error as `cause`. The waits are 0 ms, so
//    the loop yields with nextMacrotask() — in a runtime without setImmediate, through setTimeout.
// 2. dropped: the server at `droppedUrl` closes the first two requests' connections without an
//    answer, then answers; withRetry(fetch) must return that answer, from its third attempt.

/** What a runtime put on its error: the fields classification reads. */
function shape(error) {
  if (typeof error !== 'object' || error === null) return { value: String(error) };
  const cause = error.cause;
  return {
    name: error.name,
    message: error.message,
    ...(error.code === undefined ? {} : { code: String(error.code) }),
    ...(typeof cause === 'object' && cause !== null ? { cause: shape(cause) } : {}),
  };
}

/**
 * @param {{ herdless: typeof import('herdless') & typeof import('herdless/http'), fetch: typeof fetch, refusedUrl: string, droppedUrl: string }} input
 * @returns {Promise<object>} a JSON-able record of both runs
 */
export async function failedConnections({ herdless, fetch, refusedUrl, droppedUrl }) {
  const { withRetry, constantBackoff, fullJitterBackoff, retryInfo, isRetryError } = herdless;
  const refused = { attempts: 1, retried: [] };
  try {
    const res = await withRetry(fetch, {
      maxAttempts: 3,
      backoff: constantBackoff(),
      onRetry: (e) => {
        refused.attempts = e.attempt + 1;
        refused.retried.push(shape(e.error));
      },
    })(refusedUrl);
    refused.unexpected = `answered ${res.status}`;
  } catch (error) {
    refused.isRetryError = isRetryError(error);
    refused.reason = error.reason;
    refused.cause = shape(error.cause);
  }

  const dropped = { retried: [] };
  try {
    const res = await withRetry(fetch, {
      maxAttempts: 3,
      backoff: fullJitterBackoff({ initialBackoffMs: 5, maxBackoffMs: 20 }),
      onRetry: (e) => void dropped.retried.push(shape(e.error)),
    })(droppedUrl);
    dropped.status = res.status;
    dropped.body = await res.text();
    dropped.attempts = retryInfo(res)?.attempts;
  } catch (error) {
    dropped.unexpected = shape(error);
  }
  return { refused, dropped };
}
