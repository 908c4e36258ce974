/**
 * Every TypeScript / JavaScript code block of the READMEs and docs/*.md runs here, and type-checks
 * under strict TypeScript, so that a guide whose code does not run (or does not compile) fails the suite.
 *
 * How a block runs: its text is written to a module under `test/.docs-blocks/` and imported (vitest
 * compiles it, and resolves `herdless` and its subpaths to the sources as in every other test).
 * It runs against servers this file starts on 127.0.0.1: an HTTP API (see {@link api}) that
 * `https://api.example.com` in any block is pointed at, and, for the blocks that need them, a
 * redis-server and a Connect server. A server a block starts itself (`listen(8080)`) gets a free
 * port instead and is closed after the block.
 *
 * A block that is a fragment — it uses names an earlier paragraph or your own code defines — says so
 * with an HTML comment on the line just above its opening fence, which markdown does not show:
 *
 *     <!-- docs-test: NAME -->
 *
 * NAME is a key of {@link PRELUDES} below: the hidden code placed before the block (`before`:
 * imports and the names the block uses), textual substitutions on the block (`replace`), and code
 * placed after it (`after`), which checks what the block claims (a status, a count, the figures in
 * its comments) and closes what it opened. A block without a marker must run exactly as written.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_SERVER, RedisServer } from './support/redis-server.js';
import { startConnectServer } from './support/connect-server.js';
import { startLoopback, stopLoopback } from './support/loopback.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const workDir = fileURLToPath(new URL('./.docs-blocks/', import.meta.url));

/** The guides whose blocks run: what a new user reads first. */
const FILES = [
  'README.md',
  'packages/herdless/README.md',
  'packages/lab/README.md',
  ...readdirSync(`${root}docs`)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

/** Info strings of the blocks that run; any other block (sh, json, text, output) is not code to run here. */
const RUNNABLE = new Set(['ts', 'typescript', 'js', 'javascript', 'mjs', 'mts']);

interface Block {
  file: string;
  line: number;
  lang: string;
  code: string;
  /** The prelude a `<!-- docs-test: NAME -->` marker names, if any. */
  prelude: string | undefined;
}

function blocksOf(file: string): Block[] {
  const lines = readFileSync(`${root}${file}`, 'utf8').split('\n');
  const found: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    // A fence of N backticks closes at a line of at least N (CommonMark), so a block can show one.
    const open = /^(`{3,})([^`\s]*)\s*$/.exec(lines[i]!);
    if (open === null) continue;
    const fence = open[1]!;
    let end = i + 1;
    while (end < lines.length && !(lines[end]!.startsWith(fence) && /^`+\s*$/.test(lines[end]!))) end++;
    const marker = i > 0 ? /^<!--\s*docs-test:\s*(\S+)\s*-->\s*$/.exec(lines[i - 1]!) : null;
    found.push({ file, line: i + 1, lang: open[2]!, code: lines.slice(i + 1, end).join('\n'), prelude: marker?.[1] });
    i = end;
  }
  return found;
}

const blocks = FILES.flatMap(blocksOf).filter((b) => RUNNABLE.has(b.lang));

/** What the loopback world offers every block, through `globalThis.__docs` (exported for the blocks' types only). */
export interface DocsWorld {
  /** The HTTP API's origin, `http://127.0.0.1:PORT`. */
  origin: string;
  /** Requests the API has seen, per path. */
  seen: (path: string) => number;
  redisPort: number;
  /** The JSON service config docs/budgets.md shows (the file its `readFileSync` reads). */
  serviceConfigJson: string;
  /** The Connect server's origin (HTTP/1.1). */
  connectOrigin: string;
}

/** The hidden code around a fragment: see the comment at the top of this file. */
interface Prelude {
  /** Placed before the block: imports and the names the block uses. */
  before?: string;
  /** [from, to] pairs applied to the block's text; `from` must occur in it. */
  replace?: readonly (readonly [string, string])[];
  /** Placed after the block: checks of what it claims, and closing what it opened. */
  after?: string;
}

// Every prelude starts with this: the world, and assert for the `after` checks.
const HEADER = `import __assert from 'node:assert/strict';
const __docs = (globalThis as unknown as { __docs: import('../docs-blocks.test.js').DocsWorld }).__docs;
void __assert; void __docs;
`;

/** A failure retry() retries (a connection reset), for the `op`s that fail once. */
const RESET = `Object.assign(new Error('connection reset'), { code: 'ECONNRESET' })`;

const PRELUDES: Record<string, Prelude> = {
  'readme-inventory': {
    before: `const sku = 'sku-42';
const inventory = { get: async (s: string, o: { signal: AbortSignal }) => ({ sku: s, inStock: 3, aborted: o.signal.aborted }) };`,
    after: `__assert.deepEqual(stock, { sku: 'sku-42', inStock: 3, aborted: false });`,
  },
  order: {
    before: `const shop = __docs.origin;
const order = { sku: 'sku-42', quantity: 1 };
void shop;`,
    after: `__assert.equal(res.status, 201);
__assert.deepEqual(await res.json(), { created: true, idempotencyKey: true });`,
  },
  'breaker-fallback': {
    before: `const fallback = (retryAfterMs: number) => ({ fallback: true, retryAfterMs });`,
    after: `const __res = await getProfile(__docs.origin + '/users/7');
__assert.deepEqual(await (__res as Response).json(), { id: 7 });`,
  },
  'breaker-around': {
    before: `import { circuitBreaker, retry } from 'herdless';
const breaker = circuitBreaker({ openDurationMs: 5_000 });
let __calls = 0;
const op = async () => {
  if (++__calls % 2 === 1) throw ${RESET};
  return 'ok';
};`,
    after: `__assert.equal(__calls, 4); // each form: one failure retried, then 'ok'`,
  },
  'breaker-events': {
    before: `import { circuitBreaker, consecutiveFailures } from 'herdless';
const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 5_000 });
const __lines: string[] = [];
const log = { warn: (s: string) => __lines.push(s), info: (s: string) => __lines.push(s) };
const metrics = { gauge: (name: string, value: string) => __lines.push(name + '=' + value) };`,
    after: `await breaker.execute(async () => { throw ${RESET}; }).catch(() => undefined);
__assert.deepEqual(__lines, ['breaker=open']); // the 'open' listener was removed by off()`,
  },
  'breaker-isolate': {
    // The comment's claim about the refusal becomes a check of it.
    replace: [
      [
        '// refused because isolated, not because failing; e.retryAfterMs is Infinity',
        '// refused because isolated, not because failing; e.retryAfterMs is Infinity\n    __refusals.push(e.retryAfterMs);',
      ],
    ],
    before: `import { circuitBreaker, isCircuitOpenError } from 'herdless';
const breaker = circuitBreaker({ name: 'payments' });
let __calls = 0;
const op = async () => {
  __calls++;
  return 'ok';
};
const __events: string[] = [];
breaker.onStateChange((e) => void __events.push(e.type));
const __refusals: number[] = [];`,
    after: `__assert.deepEqual(__refusals, [Infinity]);
__assert.equal(__calls, 0); // refused at once: op never ran
__assert.deepEqual(__events, ['isolate', 'half-open', 'reset']); // the release half-opened it
__assert.equal(breaker.state, 'closed');`,
  },
  'breaker-round-trip': {
    before: `import type { TelemetryEvent } from 'herdless';
const __telemetry: string[] = [];
const observer = {
  onEvent: (e: TelemetryEvent) => {
    if (e.type === 'breaker-state') __telemetry.push(e.from + ' → ' + e.to + (e.cause === undefined ? '' : ' (' + e.cause + ')'));
    else if (e.type === 'breaker-rejection') __telemetry.push('rejection isolated=' + String(e.isolated));
    else __telemetry.push(e.type);
  },
};
const __lines: string[] = [];
const log = (line: string) => void __lines.push(line);
let __calls = 0;
const op = async () => {
  __calls++;
  return 'ok';
};`,
    after: `__assert.deepEqual(__lines, ['isolate@0', 'half-open@1000', 'close@1000', 'isolate@2000', 'reset@3000']);
__assert.deepEqual(__telemetry, [
  'closed → open (isolate)',
  'rejection isolated=true',
  'open → half-open (release)',
  'half-open → closed',
  'closed → open (isolate)',
  'open → closed (reset)',
]);
__assert.equal(__calls, 1); // the refused call never ran op; the trial did`,
  },
  'breaker-sampling': {
    before: `import { isCircuitOpenError } from 'herdless';`,
    // Half-open by hand (isolate, then release), then 11 calls at once: the sample's 10 trials and a refusal.
    after: `const __settle: ((ok: boolean) => void)[] = [];
const __trials = () => {
  __settle.length = 0;
  breaker.isolate().release();
  __assert.equal(breaker.state, 'half-open');
  return Array.from({ length: 11 }, () =>
    breaker.execute(() => new Promise<string>((resolve, reject) => void __settle.push((ok) => (ok ? resolve('ok') : reject(${RESET}))))).catch((e: unknown) => e),
  );
};
const __tick = () => new Promise((resolve) => setTimeout(resolve, 0));
const __first = __trials();
__assert.ok(isCircuitOpenError(await __first[10])); // up to 10 trials at once
await __tick();
__assert.equal(__settle.length, 10);
const __firstSettle = [...__settle];
for (const s of __firstSettle.slice(0, 4)) s(false);
await __tick();
__assert.equal(breaker.state, 'half-open'); // 4 failed trials: not yet
__firstSettle[4]!(false);
await __tick();
__assert.equal(breaker.state, 'open'); // 5 failed trials reopen it
for (const s of __firstSettle.slice(5)) s(true); // stale now: they change nothing
await __tick();
__assert.equal(breaker.state, 'open');
__trials();
await __tick();
__assert.equal(__settle.length, 10);
for (const s of __settle.slice(0, 5)) s(true);
await __tick();
__assert.equal(breaker.state, 'half-open'); // 5 successes: 5 failures could still reopen it
__settle[5]!(true);
await __tick();
__assert.equal(breaker.state, 'closed'); // 6 successful trials close it
for (const s of __settle.slice(6)) s(false);`,
  },
  'breaker-snapshot': {
    // One breaker opened by 5 failures, 4 s before the shutdown; the "next process" shares its clocks,
    // so the snapshot is restored with no time elapsed.
    before: `import { circuitBreaker as __circuitBreaker, consecutiveFailures, isCircuitOpenError, ManualClock, type CircuitBreakerOptions } from 'herdless';
const __clock = new ManualClock();
const __wall = { now: 1_764_600_000_000 };
const options: CircuitBreakerOptions = { name: 'payments', counting: consecutiveFailures({ threshold: 5 }), openDurationMs: 10_000, clock: __clock, now: () => __wall.now };
const __store = new Map<string, string>();
const store = { put: async (key: string, value: string) => void __store.set(key, value), get: async (key: string) => __store.get(key) };
const breaker = __circuitBreaker(options);
for (let i = 0; i < 5; i++) await breaker.execute(async () => { throw ${RESET}; }).catch(() => undefined);
await __clock.advance(4_000);
__wall.now += 4_000;`,
    after: `const __saved = JSON.parse(__store.get('breaker:payments')!);
__assert.deepEqual([__saved.state, __saved.openDurationMs, __saved.remainingOpenMs], ['open', 10_000, 6_000]);
__assert.equal(restored.state, 'open');
const __refusal = await restored.execute(async () => 'ok').catch((e: unknown) => e);
__assert.ok(isCircuitOpenError(__refusal) && __refusal.retryAfterMs === 6_000); // refuses for the rest of the open period
await __clock.advance(6_000);
__assert.equal(await restored.execute(async () => 'ok'), 'ok'); // then half-opens: the trial succeeds
__assert.equal(restored.state, 'closed');
// Another format is refused whole, so the catch starts closed.
__assert.throws(() => __circuitBreaker({ ...options, initialState: { ...__saved, schemaVersion: 9 } }), /initialState.schemaVersion must be 1 /);`,
  },
  'keyed-breakers': {
    before: `import { request as __request } from 'undici';
const target = '127.0.0.1:50051';
const serviceConfig = { methodConfig: [{ name: [{ service: 'helloworld.Greeter' }], retryPolicy: { maxAttempts: 4, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] } }] };`,
    after: `const __res = await api(__docs.origin + '/items/7');
__assert.deepEqual(await __res.json(), { id: 7 });
const __undici = await __request(__docs.origin + '/items/8', { dispatcher: agent });
__assert.deepEqual(await __undici.body.json(), { id: 8 });
__assert.deepEqual((await http.get(__docs.origin + '/items/9')).data, { id: 9 });
const __host = new URL(__docs.origin).host;
__assert.deepEqual([...breakers.keys()], ['api.example.com', __host]); // one breaker per host, shared by the three clients
__assert.equal(breakers.peek(__host)!.state, 'closed');
await agent.close();`,
  },
  'keyed-breakers-snapshot': {
    // What requests do between start and shutdown (the factory runs at each host's first get()).
    replace: [['// on shutdown', '__use(breakers);\n// on shutdown']],
    before: `import { circuitBreaker as __circuitBreaker, consecutiveFailures, ManualClock, type CircuitBreakerOptions, type KeyedBreakers } from 'herdless';
const options: CircuitBreakerOptions = { counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 10_000, clock: new ManualClock(), now: () => 1_764_600_000_000 };
const __down = __circuitBreaker({ ...options, name: 'a.example' });
await __down.execute(async () => { throw ${RESET}; }).catch(() => undefined);
// a.example's snapshot is open; b.example's is of a format this herdless does not read.
const __store = new Map([['breakers', JSON.stringify({ 'a.example': __down.snapshot(), 'b.example': { schema: 'herdless/circuit-breaker', schemaVersion: 9 } })]]);
const store = { put: async (key: string, value: string) => void __store.set(key, value), get: async (key: string) => __store.get(key) };
const __use = (b: KeyedBreakers) => {
  __assert.equal(b.get('a.example').state, 'open'); // restored from its own snapshot
  __assert.equal(b.get('b.example').state, 'closed'); // unreadable: starts closed
};`,
    after: `const __saved = JSON.parse(__store.get('breakers')!);
__assert.deepEqual(Object.keys(__saved), ['a.example', 'b.example']);
__assert.deepEqual([__saved['a.example'].state, __saved['a.example'].remainingOpenMs, __saved['b.example'].state], ['open', 10_000, 'closed']);`,
  },
  'breaker-machine': {
    before: `const now = 0;
const later = 40;
const listener = () => undefined;`,
    after: `__assert.equal(a.kind, 'permit');
__assert.equal(m.state(later), 'closed');
__assert.equal(snapshot.counts.consecutiveFailures, 1); // taken after the failure
__assert.deepEqual(m.snapshot(later, Date.now()).counts, snapshot.counts); // restored, after reset() had cleared them`,
  },
  'keyed-budgets': {
    before: `import { keyedBudgets, retry, retryThrottlingBudget } from 'herdless';
const url = __docs.origin + '/items/1';
let __calls = 0;
const call = async () => {
  if (++__calls === 1) throw ${RESET};
  return 'ok';
};`,
    after: `__assert.equal(__calls, 2);
__assert.equal(perHost.get(new URL(url).host).tokens, 9.1); // 10 tokens, one failure (−1), one success (+0.1)`,
  },
  'grpc-service-config': {
    before: `import { retry } from 'herdless';
import { parseGrpcServiceConfig } from 'herdless/grpc';
const readFileSync = (file: string, _encoding: 'utf8') => {
  __assert.equal(file, 'service-config.json');
  return __docs.serviceConfigJson;
};
const request = { name: 'world' };
const signal = new AbortController().signal;
const client = { sayHello: async (r: { name: string }) => ({ message: 'Hello ' + r.name }) };`,
    after: `__assert.equal(grpc.retryOptions.maxAttempts, 4);`,
  },
  'redis-budget': {
    // The host is the test's redis-server; the code is as the guide shows it.
    replace: [["host: 'redis.internal'", "host: '127.0.0.1', port: __docs.redisPort"]],
    before: `const __lines: unknown[] = [];
const log = { warn: (...a: unknown[]) => __lines.push(a), info: (...a: unknown[]) => __lines.push(a) };`,
    after: `__assert.equal(await callInventory(async () => 'ok'), 'ok');
__assert.deepEqual(__lines, []); // Redis answered: no fallback
redis.disconnect();`,
  },
  'per-request': {
    before: `import { Agent, request } from 'undici';
import axios from 'axios';
import { withRetry } from 'herdless/http';
import { retryInterceptor } from 'herdless/undici';
import { retryAdapter } from 'herdless/axios';
const api = withRetry(fetch);
const url = __docs.origin + '/items/1';
const dispatcher = new Agent().compose(retryInterceptor());
const client = axios.create({ baseURL: __docs.origin, adapter: retryAdapter() });
const __before = __docs.seen('/always/429');`,
    // maxAttempts 1: the 429 was sent once, not three times.
    after: `__assert.equal(__docs.seen('/always/429') - __before, 1);
await dispatcher.close();`,
  },
  'auth-refresh': {
    before: `const identity = { token: async () => 'old', refresh: async () => 'new' };
const __before = __docs.seen('/me');`,
    // The old token got a 401, the refreshed one the 200: two requests.
    after: `__assert.equal(res.status, 200);
__assert.equal(__docs.seen('/me') - __before, 2);`,
  },
  'node-redis-budget': {
    // The server is the test's redis-server; the code is as the guide shows it.
    replace: [["url: 'redis://127.0.0.1:6379'", "url: 'redis://127.0.0.1:' + __docs.redisPort"]],
    before: `import { retry } from 'herdless';`,
    after: `__assert.equal(await retry(async () => 'ok', { budget }), 'ok');
await budget.close();
client.destroy();`,
  },
  'grpc-js-client': {
    before: `import { makeGenericClientConstructor } from '@grpc/grpc-js';
const GreeterClient = makeGenericClientConstructor({}, 'helloworld.Greeter');`,
    after: `client.close();`,
  },
  'connect-client': {
    // The guide's service is helloworld's; any generated service descriptor will do here.
    replace: [["baseUrl: 'https://api.example.com'", 'baseUrl: __docs.connectOrigin']],
    before: `import { FlakyService as GreeterService } from '../support/connect-server.js';
const serviceConfig = { methodConfig: [{ name: [{ service: 'test.Flaky' }], retryPolicy: { maxAttempts: 4, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] } }] };`,
    after: `const __reply = await (client as unknown as { unary(r: { value: string }): Promise<{ value: string }> }).unary({ value: JSON.stringify({ id: 'docs', script: [{ code: 14 }, { ok: true }] }) });
__assert.deepEqual(JSON.parse(__reply.value), { ok: true, attempt: 2 });`,
  },
  'server-response': {
    before: `const res = { status: 0, headers: {} as Record<string, string>, writeHead(status: number, headers: Record<string, string>) { this.status = status; this.headers = headers; return this; } };`,
    after: `__assert.deepEqual([res.status, res.headers], [503, { 'X-Herdless-Retry': 'no' }]);`,
  },
  'undici-dispatcher': {
    before: `import { getGlobalDispatcher as __getGlobal, setGlobalDispatcher as __setGlobal } from 'undici';
const __previous = __getGlobal();`,
    after: `__setGlobal(__previous);
__assert.equal(statusCode, 200);
__assert.deepEqual(await body.json(), { id: 42 });
await dispatcher.close();`,
  },
  'axios-adapter': {
    after: `__assert.deepEqual(data, { id: 42 });`,
  },
  'http-manual-clock': {
    before: `import { ManualClock } from 'herdless';
import { withRetry } from 'herdless/http';
const url = __docs.origin + '/once/503-until-07-28-10';`,
    after: `__assert.equal(res.status, 200);
__assert.equal(__docs.seen('/once/503-until-07-28-10'), 2);`,
  },
  'layers-429': {
    before: `const url = __docs.origin + '/always/429';
const __before = __docs.seen('/always/429');`,
    after: `__assert.equal(res.status, 429);
__assert.equal(__docs.seen('/always/429') - __before, 6); // 3 requests for each form, not 12 (other guides' blocks call it too)
__assert.deepEqual(body, { gaveUp: 'do-not-retry' });`,
  },
  'layers-server': {
    before: `const dbUrl = __docs.origin;`,
    after: `__assert.equal(__docs.seen('/rows'), 0); // nothing called yet: the server only listens`,
  },
  'layers-frameworks': {
    before: `import http from 'node:http';
import { loadShedder, requestSignal } from 'herdless/server';
const shedding = loadShedder({ maxInFlight: 4 });
const report = async (_options: { signal: AbortSignal }) => 'report';
const handler = (_req: http.IncomingMessage, res: http.ServerResponse) => void res.end('ok');
// An express-shaped app (express's own types are not installed): it only records what is registered.
type Handler = (req: http.IncomingMessage, res: http.ServerResponse & { json(body: unknown): void }, next: (error?: unknown) => void) => unknown;
const __registered: string[] = [];
const app = { use: (f: Handler | ((...a: never[]) => unknown)) => void __registered.push(typeof f), get: (path: string, _f: Handler) => void __registered.push(path) };
const loadOrders = async (_options: { signal?: AbortSignal }) => [];`,
    after: `__assert.deepEqual(__registered, ['function', '/orders', 'function']);`,
  },
  'user-id': {
    before: `const id = 42;`,
    after: `__assert.deepEqual(user, { id: 42 });`,
  },
  'create-retry': {
    before: `const url = __docs.origin + '/items/1';
const request = new Request(__docs.origin);`,
    after: `__assert.equal(body, JSON.stringify({ id: 1 }));`,
  },
  'retryable-override': {
    before: `import { retry } from 'herdless';
const op = async () => 'ok';
class MyTransientError extends Error {}
void MyTransientError;`,
  },
  'manual-clock': {
    before: `let __calls = 0;
const op = async () => {
  if (++__calls === 1) throw ${RESET};
  return 'ok';
};`,
    after: `__assert.equal(await call, 'ok');
__assert.equal(__calls, 2);`,
  },
  'decide': {
    before: `const now = 0;
const rng = { random: () => 0.5 };
const error = ${RESET};`,
    after: `__assert.equal(state.attempt, 2); // the command was 'retry': the next attempt is 2`,
  },
  'telemetry-op': {
    before: `let __calls = 0;
const op = async () => {
  if (++__calls === 1) throw ${RESET};
  return 'ok';
};`,
    after: `__assert.equal(__calls, 2);`,
  },
  'lab-sim': {
    // The figures the guide gives in its comments.
    after: `__assert.deepEqual([run.finishS, run.requests, run.crashes], [10.5, 6055, 1]);
__assert.deepEqual([r.succeeded, r.gaveUp, r.finishS], [204, 796, 2.94]);
__assert.deepEqual([row!.finish.mean, row!.requests.mean, row!.crashes.mean], [12.030499999999998, 6148.05, 1.15]);`,
  },
};

/**
 * The HTTP API every block's `https://api.example.com` reaches: `/users/N` and `/items/N` answer
 * `{ id: N }`, `POST /orders` creates (201) and reports whether an Idempotency-Key came, `/always/429`
 * always answers 429, `/once/503-until-07-28-10` answers 503 with that HTTP-date (and no Date header)
 * once and 200 after, `/me` answers 200 to `Authorization: Bearer new` and 401 to anything else,
 * anything else 200 "ok".
 */
const counts = new Map<string, number>();
const api: http.RequestListener = (req, res) => {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  const n = (counts.get(path) ?? 0) + 1;
  counts.set(path, n);
  req.resume();
  const json = (status: number, value: unknown) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  const id = /^\/(?:users|items)\/(\d+)$/.exec(path);
  if (id) return json(200, { id: Number(id[1]) });
  if (path === '/orders' && req.method === 'POST') return json(201, { created: true, idempotencyKey: typeof req.headers['idempotency-key'] === 'string' });
  if (path === '/always/429') return json(429, { error: 'slow down' });
  if (path === '/me') return req.headers.authorization === 'Bearer new' ? json(200, { me: true }) : json(401, { error: 'invalid_token' });
  if (path === '/once/503-until-07-28-10' && n === 1) {
    res.sendDate = false;
    res.writeHead(503, { 'Retry-After': 'Wed, 21 Oct 2015 07:28:10 GMT' });
    return res.end();
  }
  res.end('ok');
};

const haveRedis = existsSync(REDIS_SERVER);
let apiServer: http.Server;
let redis: RedisServer | undefined;
let connect: { baseUrl: string; close(): Promise<void> } | undefined;
const budgetsJson = blocksOf('docs/budgets.md').find((b) => b.lang === 'json' && b.code.includes('helloworld.Greeter'));

beforeAll(async () => {
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  const started = await startLoopback(api);
  apiServer = started.server;
  if (haveRedis) redis = await RedisServer.start();
  // HTTP/1.1: the guide's transport is connect-web's, which runs on fetch.
  connect = await startConnectServer({ http1: true });
  const world: DocsWorld = {
    origin: started.origin,
    seen: (path) => counts.get(path) ?? 0,
    redisPort: redis?.port ?? 0,
    serviceConfigJson: budgetsJson?.code ?? '',
    connectOrigin: connect.baseUrl,
  };
  (globalThis as unknown as { __docs: DocsWorld }).__docs = world;
});

afterAll(async () => {
  await stopLoopback(apiServer);
  await redis?.stop();
  await connect?.close();
  rmSync(workDir, { recursive: true, force: true });
});

const moduleFile = (block: Block): string => `${workDir}${block.file.replace(/[^\w]/g, '-')}-${block.line}.ts`;

/** The module a block becomes: the prelude, the block (substituted), the checks. */
function moduleOf(block: Block): string {
  const prelude: Prelude = block.prelude === undefined ? {} : PRELUDES[block.prelude]!;
  let code = block.code;
  for (const [from, to] of prelude.replace ?? []) {
    if (!code.includes(from)) throw new Error(`${block.file}:${block.line}: prelude ${block.prelude} replaces ${JSON.stringify(from)}, which the block no longer has`);
    code = code.split(from).join(to);
  }
  // The one substitution every block gets: the guides' example API is the loopback one.
  code = code.split("'https://api.example.com").join('__docs.origin + \'').split('`https://api.example.com').join('`${__docs.origin}');
  return `${HEADER}${prelude.before ?? ''}\n// ---- ${block.file}:${block.line}\n${code}\n// ----\n${prelude.after ?? ''}\n`;
}

/**
 * Runs one module. Servers it starts are recorded (a fixed port becomes a free one) and closed
 * after it; a promise it leaves rejected fails it.
 */
async function runModule(file: string): Promise<void> {
  const servers: http.Server[] = [];
  const listen = http.Server.prototype.listen;
  http.Server.prototype.listen = function (this: http.Server, ...args: unknown[]) {
    servers.push(this);
    if (typeof args[0] === 'number') args[0] = 0;
    return (listen as (...a: unknown[]) => http.Server).apply(this, args);
  } as typeof listen;
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => void rejections.push(reason);
  process.on('unhandledRejection', onRejection);
  try {
    await import(pathToFileURL(file).href);
    await new Promise((resolve) => setTimeout(resolve, 10)); // a rejection left behind surfaces now
  } finally {
    http.Server.prototype.listen = listen;
    process.off('unhandledRejection', onRejection);
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  }
  expect(rejections).toEqual([]);
}

/** The TypeScript project the blocks are checked in: strict, Node's types, `herdless` as the sources. */
const TSCONFIG = {
  compilerOptions: {
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
    paths: {
      herdless: ['../../src/index.ts'],
      'herdless/grpc': ['../../src/grpc-client/index.ts'],
      'herdless/*': ['../../src/*/index.ts'],
    },
  },
  include: ['*.ts'],
};

describe('every code block of the guides runs', () => {
  it('finds the blocks, and every marker names a prelude this file has (and every prelude is used)', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(30);
    const unknown = blocks.filter((b) => b.prelude !== undefined && !(b.prelude in PRELUDES)).map((b) => `${b.file}:${b.line} names ${b.prelude}`);
    expect(unknown).toEqual([]);
    const used = new Set(blocks.map((b) => b.prelude));
    expect(Object.keys(PRELUDES).filter((k) => !used.has(k))).toEqual([]);
    expect(budgetsJson, "docs/budgets.md's service config").toBeDefined();
  });

  it('every docs-test comment sits on the line just above a TypeScript or JavaScript block', () => {
    const misplaced: string[] = [];
    for (const file of FILES) {
      const lines = readFileSync(`${root}${file}`, 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (!line.includes('docs-test:')) return;
        const next = /^`{3,}(\S*)/.exec(lines[i + 1] ?? '');
        if (!/^<!--\s*docs-test:\s*\S+\s*-->\s*$/.test(line) || next === null || !RUNNABLE.has(next[1]!)) misplaced.push(`${file}:${i + 1}`);
      });
    }
    expect(misplaced).toEqual([]);
  });

  // What a TypeScript user who pastes a block gets: the blocks (with their preludes) compile under
  // strict settings. One tsc run over all of them (a few seconds of CPU).
  it('every block type-checks (strict TypeScript)', () => {
    for (const block of blocks) writeFileSync(moduleFile(block), moduleOf(block));
    writeFileSync(`${workDir}tsconfig.json`, JSON.stringify(TSCONFIG, null, 2));
    const tsc = spawnSync(process.execPath, [fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url)), '-p', `${workDir}tsconfig.json`], { encoding: 'utf8' });
    // A module is named after its block (README-md-180.ts: README.md, the fence on line 180); its
    // line numbers count the hidden prelude too.
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });

  it.each(blocks.map((b) => [`${b.file}:${b.line}${b.prelude === undefined ? '' : ` (${b.prelude})`}`, b] as const))('%s', async (_name, block) => {
    if ((block.code.includes('ioredis') || block.code.includes("from 'redis'")) && !haveRedis && !process.env.CI) return; // no redis-server here: the redis tests say so too
    const file = moduleFile(block);
    writeFileSync(file, moduleOf(block));
    try {
      await runModule(file);
    } catch (error) {
      if (block.prelude !== undefined) throw error;
      // The usual cause: a fragment nobody marked. Say how to mark it.
      throw new Error(
        `${block.file}:${block.line} does not run as written (${String(error)}). If it is a fragment, put <!-- docs-test: NAME --> on the line above its fence and add NAME to PRELUDES in docs-blocks.test.ts (see docs/testing.md).`,
        { cause: error },
      );
    }
  });
});
