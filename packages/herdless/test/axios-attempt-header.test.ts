import axios, { type AxiosAdapter, type AxiosResponse, type InternalAxiosRequestConfig } from 'axios';
import { afterEach, describe, expect, it } from 'vitest';
import { constantBackoff } from 'herdless';
import { retryAdapter } from 'herdless/axios';
import { ATTEMPT_HEADER } from 'herdless/http';
import { crossOriginInBrowser, retryAttemptHeader } from '../src/http/attempt-header.js';

const PAGE = 'https://app.example';
const immediate = constantBackoff({ delayMs: 0 });
const byDefault = { attemptHeader: ATTEMPT_HEADER, attemptHeaderNamed: false };
const named = { attemptHeader: ATTEMPT_HEADER, attemptHeaderNamed: true };
const off = { attemptHeader: undefined, attemptHeaderNamed: true };

describe('crossOriginInBrowser: the one decision the retrying fetch and the axios adapter share', () => {
  it.each<[string | undefined, string, boolean]>([
    [undefined, 'https://api.example/x', false], // Node, Bun, Deno, Workers: no CORS on their own requests
    [PAGE, `${PAGE}/api`, false],
    [PAGE, '/api?x=1', false], // relative: resolved against the page
    [PAGE, 'api', false],
    [PAGE, 'https://APP.example:443/api', false], // the same origin written otherwise
    [PAGE, 'https://api.example/orders', true], // another host
    [PAGE, 'http://app.example/orders', true], // another scheme
    [PAGE, 'https://app.example:8443/orders', true], // another port
    ['null', '/api', true], // an opaque origin (a sandboxed frame, a data: page): everything is cross-origin
    [PAGE, 'http://[bad', true], // unparsable: the client refuses it on its own; nothing to add a header to
  ])('page %s, url %s → %s', (origin, url, expected) => {
    expect(crossOriginInBrowser(url, origin)).toBe(expected);
  });
});

describe('retryAttemptHeader: which header a request\'s retries carry', () => {
  it('the default header: everywhere outside a browser, same-origin only in one', () => {
    expect(retryAttemptHeader(byDefault, () => 'https://api.example/x', undefined)).toBe(ATTEMPT_HEADER);
    expect(retryAttemptHeader(byDefault, () => `${PAGE}/x`, PAGE)).toBe(ATTEMPT_HEADER);
    expect(retryAttemptHeader(byDefault, () => 'https://api.example/x', PAGE)).toBeUndefined();
  });

  it('a header the caller named goes cross-origin too; `false` sends none anywhere', () => {
    expect(retryAttemptHeader(named, () => 'https://api.example/x', PAGE)).toBe(ATTEMPT_HEADER);
    expect(retryAttemptHeader(off, () => `${PAGE}/x`, PAGE)).toBeUndefined();
    expect(retryAttemptHeader(off, () => 'https://api.example/x', undefined)).toBeUndefined();
  });

  it('builds the URL only when it decides something (a browser and the default header)', () => {
    let built = 0;
    const url = (): string => {
      built++;
      return `${PAGE}/x`;
    };
    retryAttemptHeader(byDefault, url, undefined);
    retryAttemptHeader(named, url, PAGE);
    retryAttemptHeader(off, url, PAGE);
    expect(built).toBe(0);
    retryAttemptHeader(byDefault, url, PAGE);
    expect(built).toBe(1);
  });
});

describe('retryAdapter in a browser (a global location with an origin), over a fake xhr adapter', () => {
  const g = globalThis as { location?: unknown };
  afterEach(() => {
    delete g.location;
  });

  /**
   * The attempt header of each attempt a fake base adapter (in the place of axios's xhr adapter)
   * saw, two 503s then a 200, with `location` as in a page at `origin` (none: not a browser).
   */
  async function attemptsSeen(origin: string | undefined, request: { url: string; baseURL?: string; herdless?: object }, options: object = {}): Promise<(string | undefined)[]> {
    if (origin === undefined) delete g.location;
    else g.location = { origin };
    const seen: (string | undefined)[] = [];
    const xhr: AxiosAdapter = async (config: InternalAxiosRequestConfig): Promise<AxiosResponse> => {
      const value = config.headers.get(ATTEMPT_HEADER) ?? config.headers.get('x-attempt');
      seen.push(value === undefined || value === null ? undefined : String(value));
      return { data: '', status: seen.length < 3 ? 503 : 200, statusText: '', headers: {}, config, request: {} };
    };
    const api = axios.create({ adapter: retryAdapter({ adapter: xhr, maxAttempts: 3, backoff: immediate, ...options }) });
    const response = await api.request(request);
    expect(response.status).toBe(200);
    return seen;
  }

  it('same-origin requests (absolute, relative, through baseURL) carry the default header on retries', async () => {
    expect(await attemptsSeen(PAGE, { url: `${PAGE}/api` })).toEqual([undefined, '2', '3']);
    expect(await attemptsSeen(PAGE, { url: '/api' })).toEqual([undefined, '2', '3']);
    expect(await attemptsSeen(PAGE, { baseURL: `${PAGE}/v1`, url: 'items/42' })).toEqual([undefined, '2', '3']);
  });

  it('cross-origin requests do not: a retry must not need a preflight its first attempt did not', async () => {
    expect(await attemptsSeen(PAGE, { url: 'https://api.example/orders' })).toEqual([undefined, undefined, undefined]);
    expect(await attemptsSeen(PAGE, { baseURL: 'https://api.example', url: '/orders' })).toEqual([undefined, undefined, undefined]);
    expect(await attemptsSeen('null', { url: '/api' })).toEqual([undefined, undefined, undefined]);
  });

  it('a header the caller named is sent cross-origin too', async () => {
    expect(await attemptsSeen(PAGE, { url: 'https://api.example/orders' }, { attemptHeader: ATTEMPT_HEADER })).toEqual([undefined, '2', '3']);
    expect(await attemptsSeen(PAGE, { url: 'https://api.example/orders' }, { attemptHeader: 'X-Attempt' })).toEqual([undefined, '2', '3']);
  });

  it('outside a browser (Node\'s http adapter) every request carries it, whatever its host', async () => {
    expect(await attemptsSeen(undefined, { url: 'https://api.example/orders' })).toEqual([undefined, '2', '3']);
  });
});
