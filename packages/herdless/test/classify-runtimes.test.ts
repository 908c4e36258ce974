import { describe, expect, it } from 'vitest';
import { constantBackoff, isRetryError, isTransientError, retry } from 'herdless';
import { NETWORK_ERROR_MESSAGES, NETWORK_ERROR_MESSAGE_PREFIXES } from 'herdless/core';
import { retryInfo, withRetry } from 'herdless/http';

/*
 * A failed connection as each runtime herdless runs in rejects `fetch()` with it. Node, Bun and Deno
 * are the shapes those runtimes produced for a refused and a dropped loopback connection (Node 20/26,
 * Bun 1.4.5, Deno 2.9.6; runtime-fetch.test.ts runs the real runtimes, and the chromium test the
 * real browser). Firefox, Safari and Workers give no code either; their wording is in
 * NETWORK_ERROR_MESSAGES' documentation with its source.
 */

/** An error with the fields a runtime sets, built as that runtime builds it (no stack for Bun's, as Bun reports none). */
const shaped = (message: string, fields: Record<string, unknown> = {}, cause?: unknown): TypeError => Object.assign(new TypeError(message, cause === undefined ? undefined : { cause }), fields);
const coded = (message: string, code: string): Error => Object.assign(new Error(message), { code });

const FAILED_CONNECTIONS: [string, () => unknown][] = [
  ['Node (undici): fetch failed ← ECONNREFUSED', () => shaped('fetch failed', {}, coded('connect ECONNREFUSED 127.0.0.1:9', 'ECONNREFUSED'))],
  ['Node (undici): fetch failed ← SocketError UND_ERR_SOCKET', () => shaped('fetch failed', {}, Object.assign(coded('other side closed', 'UND_ERR_SOCKET'), { name: 'SocketError' }))],
  ['Bun: TypeError with code ECONNREFUSED on itself', () => shaped('ECONNREFUSED: Unable to connect. Is the computer able to access the url?', { code: 'ECONNREFUSED', path: 'http://127.0.0.1:9/', errno: 0 })],
  ['Bun: TypeError with code ECONNRESET on itself', () => shaped('ECONNRESET: The socket connection was closed unexpectedly.', { code: 'ECONNRESET', path: 'http://127.0.0.1:9/', errno: 0 })],
  ['Deno 2.9: fetch failed ← a refused connection', () => shaped('fetch failed', {}, new Error('error sending request for url (http://127.0.0.1:9/): client error (Connect): tcp connect error: Connection refused (os error 111)'))],
  ['Deno 2.9: fetch failed ← a dropped connection', () => shaped('fetch failed', {}, new Error('error sending request from 127.0.0.1:50000 for http://127.0.0.1:9/ (127.0.0.1:9): client error (SendRequest): connection closed before message completed'))],
  ['Deno (older): the TypeError itself', () => shaped('error sending request for url (http://127.0.0.1:9/): client error (Connect): tcp connect error: Connection refused (os error 111)')],
  ['Chrome', () => shaped('Failed to fetch')],
  ['Chrome, with the host', () => shaped('Failed to fetch (api.example.com)')],
  ['Chrome, a body that failed after the headers', () => shaped('network error')],
  ['Firefox', () => shaped('NetworkError when attempting to fetch resource.')],
  ['Safari 17+', () => shaped('Load failed')],
  ['Safari 17+, with the host', () => shaped('Load failed (api.example.com)')],
  ['Safari 16, offline', () => shaped('The Internet connection appears to be offline.')],
  ['Safari 16, connection lost', () => shaped('The network connection was lost.')],
  ['Cloudflare Workers', () => shaped('Network connection lost.')],
  ['React Native / whatwg-fetch', () => shaped('Network request failed')],
];

const NOT_RETRIED: [string, unknown][] = [
  ['a bug', new TypeError('x is not a function')],
  ['a message that only starts like a network one', new TypeError('Failed to fetch the config: bad JSON')],
  ['a message with a different case', new TypeError('failed to fetch')],
  ['Node: fetch failed ← ENOTFOUND (the code decides)', shaped('fetch failed', {}, coded('getaddrinfo ENOTFOUND x.invalid', 'ENOTFOUND'))],
  ['Node: fetch failed with no cause', shaped('fetch failed')],
  ['Bun: ENOTFOUND on the TypeError (the code decides)', shaped('getaddrinfo ENOTFOUND x.invalid', { code: 'ENOTFOUND' })],
  ['a network wording with a non-transient code on its cause', shaped('Failed to fetch', {}, coded('certificate has expired', 'CERT_HAS_EXPIRED'))],
  ['a network wording on a plain Error (not a TypeError)', new Error('Failed to fetch')],
  ['a network wording on a cause four levels down', shaped('x', {}, new Error('a', { cause: new Error('b', { cause: new Error('c', { cause: new Error('Failed to fetch') }) }) }))],
  ['a message that is not a string', Object.assign(new TypeError(), { message: 42 })],
];

describe('a failed connection in every runtime is transient by default', () => {
  it.each(FAILED_CONNECTIONS)('isTransientError: %s', (_name, make) => {
    expect(isTransientError(make())).toBe(true);
  });

  it.each(NOT_RETRIED)('isTransientError: %s is not', (_name, error) => {
    expect(isTransientError(error)).toBe(false);
  });

  it.each(FAILED_CONNECTIONS)('retry() with the default classification retries it: %s', async (_name, make) => {
    const seen: unknown[] = [];
    let calls = 0;
    const value = await retry(
      async () => {
        calls++;
        if (calls === 1) throw make();
        return 'ok';
      },
      { backoff: constantBackoff(), onRetry: (e) => void seen.push(e.error) },
    );
    expect([value, calls]).toEqual(['ok', 2]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(TypeError);
  });

  it.each(FAILED_CONNECTIONS)('withRetry(fetch) retries it and returns the answer of the second attempt: %s', async (_name, make) => {
    const urls: string[] = [];
    const fakeFetch = async (input: RequestInfo | URL): Promise<Response> => {
      urls.push(String(input));
      if (urls.length === 1) throw make();
      return new Response('answered', { status: 200 });
    };
    const res = await withRetry(fakeFetch, { backoff: constantBackoff() })('http://127.0.0.1:9/orders');
    expect([res.status, await res.text()]).toEqual([200, 'answered']);
    expect(urls).toEqual(['http://127.0.0.1:9/orders', 'http://127.0.0.1:9/orders']);
    expect(retryInfo(res)?.attempts).toBe(2);
  });

  it.each(NOT_RETRIED)('withRetry(fetch) sends once and rejects for %s', async (_name, error) => {
    let calls = 0;
    const fakeFetch = async (): Promise<Response> => {
      calls++;
      throw error;
    };
    const failure = await withRetry(fakeFetch, { backoff: constantBackoff() })('http://127.0.0.1:9/').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(calls).toBe(1);
    expect(isRetryError(failure) ? [failure.reason, failure.cause] : failure).toEqual(['fatal', error]);
  });

  it('a refused connection that never recovers is retried up to maxAttempts, and the last TypeError is the cause', async () => {
    let calls = 0;
    const failure = await withRetry(
      async () => {
        calls++;
        throw shaped('Failed to fetch');
      },
      { backoff: constantBackoff(), maxAttempts: 4 },
    )('http://127.0.0.1:9/').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(calls).toBe(4);
    expect(isRetryError(failure) && [failure.reason, failure.attempts, (failure.cause as Error).message]).toEqual(['exhausted', 4, 'Failed to fetch']);
  });

  it('a CORS failure is the same TypeError as a dropped connection, so it is retried; the documented opt-out stops it', async () => {
    // Browsers reject a failed CORS check with exactly the dropped connection's TypeError (the Fetch
    // standard's opaque "network error"): herdless cannot tell them apart and retries both.
    let calls = 0;
    const cors = async (): Promise<Response> => {
      calls++;
      throw shaped('Failed to fetch');
    };
    await withRetry(cors, { backoff: constantBackoff(), maxAttempts: 3 })('https://other.example/').catch(() => undefined);
    expect(calls).toBe(3);
    calls = 0;
    const noConnectionRetries = withRetry(cors, { backoff: constantBackoff(), maxAttempts: 3, retryable: (e, { transient }) => transient && !(e instanceof TypeError) });
    await noConnectionRetries('https://other.example/').catch(() => undefined);
    expect(calls).toBe(1);
  });
});

describe('NETWORK_ERROR_MESSAGES and NETWORK_ERROR_MESSAGE_PREFIXES', () => {
  it('are frozen data', () => {
    expect(Object.isFrozen(NETWORK_ERROR_MESSAGES)).toBe(true);
    expect(Object.isFrozen(NETWORK_ERROR_MESSAGE_PREFIXES)).toBe(true);
    expect(NETWORK_ERROR_MESSAGE_PREFIXES).toEqual(['Failed to fetch (', 'Load failed (', 'error sending request ']);
  });

  it('every message is recognised exactly, every prefix with any rest, and nothing shorter', () => {
    for (const m of NETWORK_ERROR_MESSAGES) {
      expect(isTransientError(new TypeError(m))).toBe(true);
      expect(isTransientError(new TypeError(`${m} `))).toBe(NETWORK_ERROR_MESSAGE_PREFIXES.some((p) => `${m} `.startsWith(p)));
    }
    for (const p of NETWORK_ERROR_MESSAGE_PREFIXES) {
      expect(isTransientError(new TypeError(`${p}x)`))).toBe(true);
      expect(isTransientError(new TypeError(p.slice(0, -1)))).toBe(NETWORK_ERROR_MESSAGES.includes(p.slice(0, -1)));
    }
  });
});
