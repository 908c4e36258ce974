import { performance } from 'node:perf_hooks';
import { withRetry, type FetchFunction } from 'herdless/http';
import { PyRandom, backoffFromSpec, budgetFromSpec, recovery, throttleFromSpec, type MetastableRun, type MetastableSetup, type PolicySpec } from 'herdless/sim';
import { Agent, fetch as undiciFetch } from 'undici';
import { latenessOf, type Lateness } from './lateness.js';
import { TIMEOUT_HEADER, type QueueResetBody, type QueueStatsResponse } from './queue-server.js';
import { PING_PATH, RESET_PATH, STATS_PATH } from './server.js';
import type { LiveTarget } from './fleet.js';

/** One live run of the metastable queue: open-loop clients with one policy against the target. */
export interface QueueRunSpec {
  target: LiveTarget;
  /** The rate, the client processes, the timeout, the horizon, the trigger; `server` is sent to a lab server's reset. */
  setup: MetastableSetup;
  policy: PolicySpec;
  /** The seed of the clients' generator (arrivals and jitter) and of the lab server's service times. */
  seed: number;
  /** Called about once a second with the time run and the attempts sent. */
  onProgress?: ((elapsedMs: number, sent: number, queue: number | undefined) => void) | undefined;
}

/** What a live run measured: the simulator's per-second series (so its verdict and its row apply) and what only a live run has. */
export interface QueueRunResult extends MetastableRun {
  /** Per second: attempts that timed out at the client. */
  timeouts: number[];
  /** Per second: requests the policy's adaptive throttle refused locally (not sent). */
  throttled: number[];
  /** Why requests ended without an answer (the library's give-up reasons: `exhausted`, `budget`, `do-not-retry`, `throttled`…), and how many. */
  gaveUpBy: Record<string, number>;
  /** Attempts that failed without a response other than a timeout (connection errors). */
  networkErrors: number;
  /** Send lateness: actual send time − the time the policy chose (the Poisson arrival, or failure + wait). */
  lateness: Lateness;
  /** Every send's lateness, ms (for summaries over several runs; not in the JSON). */
  latenessMs: Float64Array;
  /** The server's own record, when the target is a metastable lab server. */
  server: QueueStatsResponse | undefined;
}

/** Keep-alive connections opened before a run: about the requests in flight at the normal load. */
const WARM_CONNECTIONS = 50;

/** The open-loop arrivals: Poisson at the peak rate, thinned outside a spike (Lewis and Shedler, 1979), as the simulator draws them. */
export function queueArrivals(setup: MetastableSetup, rng: PyRandom): number[] {
  const t = setup.trigger;
  const spike = t.kind === 'spike';
  const peak = (setup.ratePerSecond * (spike ? t.factor : 1)) / 1000;
  const out: number[] = [];
  for (let at = rng.expovariate(peak); at < setup.horizonMs; at += rng.expovariate(peak)) {
    if (!spike || (at >= t.startMs && at < t.endMs) || rng.random() * t.factor < 1) out.push(at);
  }
  return out;
}

/** Reads a metastable `lab server`'s stats, or undefined when the server answers another model's. */
export async function readQueueStats(base: string, dispatcher?: Agent): Promise<QueueStatsResponse | undefined> {
  const res = await undiciFetch(new URL(STATS_PATH, base), dispatcher === undefined ? {} : { dispatcher });
  if (res.status !== 200) throw new Error(`${base}: stats answered ${res.status}`);
  const body = (await res.json()) as Partial<QueueStatsResponse>;
  return body.model === 'metastable' ? (body as QueueStatsResponse) : undefined;
}

/** POSTs the metastable lab server's reset with the run's server, trigger and seed. @throws Error with the server's reason. */
async function resetQueueServer(base: string, body: QueueResetBody, dispatcher: Agent): Promise<void> {
  const res = await undiciFetch(new URL(RESET_PATH, base), { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, dispatcher });
  const text = await res.text();
  if (res.status !== 204) throw new Error(`${base}: reset answered ${res.status}: ${text.trim()}`);
}

/**
 * Runs the metastable queue's clients on real sockets: new requests arrive open loop (Poisson at
 * `ratePerSecond`, drawn from `PyRandom(seed)` up front; a spike trigger multiplies the rate for a
 * while), spread round robin over `processes` client processes, each holding its own budget and
 * adaptive throttle. Every request goes through the library's `withRetry` over undici's `fetch`
 * with `attemptTimeoutMs` = the setup's timeout: every attempt carries that timeout in
 * `connect-timeout-ms` (deadline propagation, for a server that drops expired requests); one that
 * times out is aborted (its connection closes: the server learns that its client left) and
 * retried by the policy.
 * Per second (the run's clock from its time 0) it counts the new requests, the attempts sent (the
 * offered load), the answers that reached a client still waiting (goodput), timeouts and
 * "overloaded" answers; the queue and the wasted work come from the lab server's stats. A
 * metastable `lab server` target is first reset to the setup's server, trigger and seed.
 *
 * The run stops at the horizon: waits and attempts in flight are aborted and the pool is destroyed.
 */
export async function runLiveQueue(spec: QueueRunSpec): Promise<QueueRunResult> {
  const { setup, policy } = spec;
  const seconds = setup.horizonMs / 1000;
  const zeros = (): number[] => new Array<number>(seconds).fill(0);
  const agent = new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 10_000 });
  const controllers = new Set<AbortController>();
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  const stopAll = (reason: string): void => {
    stopped = true;
    const error = new Error(reason);
    for (const c of controllers) c.abort(error);
    controllers.clear();
  };
  try {
    const rng = new PyRandom(spec.seed);
    const arrivals = queueArrivals(setup, rng);
    const backoff = backoffFromSpec(policy.backoff, 'policy.backoff');
    const budgets = Array.from({ length: setup.processes }, () => (policy.budget === undefined ? undefined : budgetFromSpec(policy.budget, 'policy.budget')));
    const throttles = Array.from({ length: setup.processes }, () => (policy.throttle === undefined ? undefined : throttleFromSpec(policy.throttle, 'policy.throttle')));
    const maxAttempts = policy.maxAttempts ?? Number.MAX_SAFE_INTEGER;
    const lab = spec.target.labServer;
    if (lab !== undefined) {
      await Promise.all(
        Array.from({ length: WARM_CONNECTIONS }, async () => {
          const res = await undiciFetch(new URL(PING_PATH, lab), { dispatcher: agent });
          await res.arrayBuffer();
        }),
      );
    }
    // Time 0 is taken before the reset is sent, so the server's time 0 (and its trigger) is never
    // before the clients': the reset's round trip counts as lateness.
    const t0 = performance.now();
    if (lab !== undefined) await resetQueueServer(lab, { server: setup.server, trigger: setup.trigger, seed: spec.seed }, agent);
    const run: QueueRunResult = {
      fresh: zeros(),
      offered: zeros(),
      goodput: zeros(),
      queue: zeros(),
      wasted: zeros(),
      shed: zeros(),
      gaveUp: 0,
      recoveryS: null,
      timeouts: zeros(),
      throttled: zeros(),
      gaveUpBy: {},
      networkErrors: 0,
      lateness: latenessOf([]),
      latenessMs: new Float64Array(0),
      server: undefined,
    };
    const lateness: number[] = [];
    let sent = 0;
    const sec = (now: number): number => Math.min(seconds - 1, Math.max(0, Math.floor((now - t0) / 1000)));
    const calls: Promise<void>[] = [];

    /** One new request: its own withRetry (its attempts and chosen send times are its own), its process's budget and throttle. */
    const call = (index: number, intendedAt: number): Promise<void> => {
      let intended = intendedAt;
      run.fresh[sec(intendedAt)]!++;
      const fetchFn: FetchFunction = async (input, init) => {
        const now = performance.now();
        sent++;
        run.offered[sec(now)]!++;
        lateness.push(now - intended);
        try {
          const res = await undiciFetch(input as string, { ...(init as object), dispatcher: agent });
          // Read the few bytes in full: cancelling an unread body would close the connection.
          await res.arrayBuffer();
          if (!stopped) {
            const at = sec(performance.now());
            if (res.status === 200) run.goodput[at]!++;
            else if (res.status === 503) run.shed[at]!++;
          }
          return res as unknown as Response;
        } catch (error) {
          if (!stopped) {
            if ((init?.signal as AbortSignal | undefined)?.aborted === true) run.timeouts[sec(performance.now())]!++;
            else run.networkErrors++;
          }
          throw error;
        }
      };
      const p = index % setup.processes;
      const budget = budgets[p];
      const throttle = throttles[p];
      const api = withRetry(fetchFn, {
        maxAttempts,
        backoff,
        random: rng,
        attemptTimeoutMs: setup.timeoutMs,
        maxRetryAfterMs: setup.horizonMs,
        ...(budget === undefined ? {} : { budget }),
        ...(throttle === undefined ? {} : { throttle }),
        onRetry: ({ delayMs }) => {
          intended = performance.now() + delayMs;
        },
        onGiveUp: ({ reason }) => {
          if (stopped) return;
          run.gaveUp++;
          run.gaveUpBy[reason] = (run.gaveUpBy[reason] ?? 0) + 1;
          if (reason === 'throttled') run.throttled[sec(performance.now())]!++;
        },
      });
      const controller = new AbortController();
      controllers.add(controller);
      // Each attempt tells the server how long its client waits (deadline propagation).
      return api(spec.target.url, { signal: controller.signal, headers: { [TIMEOUT_HEADER]: String(Math.round(setup.timeoutMs)) } }).then(
        () => void controllers.delete(controller),
        () => void controllers.delete(controller),
      );
    };

    let next = 0;
    const launch = (): void => {
      const now = performance.now();
      while (next < arrivals.length && t0 + arrivals[next]! <= now) {
        calls.push(call(next, t0 + arrivals[next]!));
        next++;
      }
      if (next < arrivals.length) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          launch();
        }, Math.max(0, t0 + arrivals[next]! - performance.now()));
        timers.add(timer);
      }
    };
    launch();

    const progress = setInterval(() => spec.onProgress?.(performance.now() - t0, sent, undefined), 1000);
    timers.add(progress);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, t0 + setup.horizonMs - performance.now()));
      timers.add(timer);
    });
    for (const t of timers) clearTimeout(t);
    timers.clear();
    stopAll('horizon reached');
    await Promise.all(calls);
    if (lab !== undefined) {
      const server = await readQueueStats(lab, agent);
      run.server = server;
      if (server !== undefined) {
        for (let s = 0; s < seconds; s++) {
          const i = s - server.firstSecond;
          run.queue[s] = server.queue[i] ?? 0;
          run.wasted[s] = server.wasted[i] ?? 0;
        }
      }
    }
    run.recoveryS = recovery(run, setup.trigger.endMs);
    run.latenessMs = Float64Array.from(lateness);
    run.lateness = latenessOf(run.latenessMs);
    return run;
  } finally {
    for (const t of timers) clearTimeout(t);
    stopAll('run ended');
    await agent.destroy();
  }
}
