#!/usr/bin/env python3
"""An independent reference for the simulator's golden figures, in CPython.

The lab's engine (packages/herdless/src/sim/engine.ts) is a TypeScript re-implementation of the
article's Python model, with flat typed-array queues, two batch paths and a port of CPython's
Mersenne Twister. This script is the model written the plain way, from the rules the engine's
documentation states, with CPython's own `random` module: one list per tick, one loop per request.
Its figures do not come from the engine, so the tests that pin the engine's output to them
(sim-engine-paths.test.ts, sim-fleet.test.ts) would notice a change in either.

The rules (ticks of tickMs; figures per run):
  S1  each tick has an ordered batch: first sends placed before the run, then appended retries.
  S2  per tick t: (a) recent[t mod window] = batch size; an outage starting at t extends downUntil
      to its end; (b) if t >= downUntil and sum(recent) > crashLimit: crash, downUntil = t + restart;
      (c) down: every request fails, no draw; (d) up: sample(range(n), min(capacity, n)) succeed;
      (e) the requests one by one in batch order, each with its retry decision and its draws.
  S3  a retry decided at tick t with wait w ms joins tick t + 1 + round(w / tickMs) (half to even);
      at or past the horizon it is never sent (and stays outstanding).
  first sends: 'together' — client c at trunc(uniform(0, spread_s) / tick_s); 'poisson' — per
      client, x = expovariate(rate) while x < horizon_s: a first send at trunc(x / tick_s).
  A request that fails retries while attempt < maxAttempts (and the budget, if any, allows it);
  otherwise it gives up. With stopWhenIdle the run stops after the first tick with nothing
  outstanding.

Usage: python3 scripts/sim-reference.py paths   -> the figures of sim-engine-paths.test.ts (seed 3)
       python3 scripts/sim-reference.py fleet   -> the fleet loads of sim-fleet.test.ts (seeds 0, 1)
Output: JSON on stdout.
"""
import json
import math
import random
import sys

ARTICLE_SERVER = dict(tickMs=10, capacityPerTick=5, crashWindowTicks=10, crashLimit=100, restartMs=1000, startupMs=1000, outages=[])


# Backoffs: the wait in ms before retry number `attempt` (1 for the first retry), given the previous
# wait of this request. Each draws from `rng` exactly as its formula's source writes it.
def constant(delay_ms):
    return {'constant': delay_ms, 'delay': lambda attempt, prev, rng: delay_ms}


def full_jitter(initial_ms, multiplier, cap_ms):
    return {'delay': lambda attempt, prev, rng: rng.uniform(0, min(cap_ms, initial_ms * multiplier ** (attempt - 1)))}


def decorrelated(base_ms, cap_ms):
    return {'delay': lambda attempt, prev, rng: min(cap_ms, rng.uniform(base_ms, 3 * max(prev, base_ms)))}


def run(clients, arrivals, server, backoff, max_attempts, horizon_ms, stop_when_idle, seed, budget=None):
    rng = random.Random(seed)
    tick_ms = server['tickMs']
    horizon = horizon_ms // tick_ms
    batches = [[] for _ in range(horizon)]  # (client, attempt, previous wait ms)
    outstanding = 0
    fresh = [0] * horizon
    if arrivals['kind'] == 'together':
        spread_s = arrivals['spreadMs'] / 1000
        for c in range(clients):
            tick = int(rng.uniform(0, spread_s) / (tick_ms / 1000))
            outstanding += 1
            if tick < horizon:
                batches[tick].append((c, 1, 0.0))
                fresh[tick] += 1
    else:
        horizon_s = horizon_ms / 1000
        for c in range(clients):
            x = rng.expovariate(arrivals['ratePerSecond'])
            while x < horizon_s:
                tick = int(x / (tick_ms / 1000))
                outstanding += 1
                if tick < horizon:
                    batches[tick].append((c, 1, 0.0))
                    fresh[tick] += 1
                x += rng.expovariate(arrivals['ratePerSecond'])
    budgets = [budget(c) for c in range(clients)] if budget else None
    window = server['crashWindowTicks']
    recent = [0] * window
    down_until = round(server['startupMs'] / tick_ms)
    restart = server['restartMs'] // tick_ms
    outages = [(o['startMs'] // tick_ms, o['endMs'] // tick_ms) for o in server['outages']]
    requests = succeeded = gave_up = crashes = 0
    arrivals_per_tick = [0] * horizon
    retries_per_tick = [0] * horizon
    ticks = horizon
    for t in range(horizon):
        batch = batches[t]
        n = len(batch)
        recent[t % window] = n
        for start, end in outages:
            if start == t and end > down_until:
                down_until = end
        if t >= down_until and sum(recent) > server['crashLimit']:
            down_until = t + restart
            crashes += 1
        if n > 0:
            ok = set(rng.sample(range(n), min(server['capacityPerTick'], n))) if t >= down_until else set()
            requests += n
            arrivals_per_tick[t] = n
            now_ms = t * tick_ms
            for pos, (client, attempt, prev) in enumerate(batch):
                b = budgets[client] if budgets else None
                if b:
                    b.on_attempt(now_ms, attempt > 1)
                if attempt > 1:
                    retries_per_tick[t] += 1
                if pos in ok:
                    succeeded += 1
                    outstanding -= 1
                    if b:
                        b.on_success(now_ms)
                    continue
                if b:
                    b.on_failure(now_ms)
                if attempt >= max_attempts or (b and not b.allow_retry(now_ms)):
                    gave_up += 1
                    outstanding -= 1
                    continue
                wait = backoff['delay'](attempt, prev, rng)
                at = t + 1 + round(wait / tick_ms)  # Python's round: half to even
                if at < horizon:
                    batches[at].append((client, attempt + 1, wait))
            batches[t] = None  # done with it
        if stop_when_idle and outstanding == 0:
            ticks = t + 1
            break
    return dict(
        requests=requests, succeeded=succeeded, gaveUp=gave_up, outstanding=outstanding, crashes=crashes,
        finishMs=ticks * tick_ms,
        arrivalsWeighted=sum((i + 1) * x for i, x in enumerate(arrivals_per_tick)),
        retriesWeighted=sum((i + 1) * x for i, x in enumerate(retries_per_tick)),
        perTick=dict(arrivals=arrivals_per_tick, fresh=fresh),
    )


def herd(backoff, max_attempts, clients=1000, spread_ms=0, horizon_ms=120_000, server=None, seed=3):
    return run(clients, dict(kind='together', spreadMs=spread_ms), {**ARTICLE_SERVER, **(server or {})}, backoff, max_attempts, horizon_ms, True, seed)


def paths():
    expo = lambda: full_jitter(200, 2, 10_000)
    cases = {
        'immediate, spread 3 s, 6 attempts': lambda: herd(constant(0), 6, clients=2000, spread_ms=3000),
        'immediate, 5 attempts, 200/tick, no crash': lambda: herd(constant(0), 5, clients=5000, spread_ms=200, server=dict(capacityPerTick=200, crashLimit=1e9, startupMs=0)),
        'fixed 1 s, 5 attempts': lambda: herd(constant(1000), 5, clients=1000),
        'constant 15 ms (rounds to 2 ticks), spread 900 ms': lambda: herd(constant(15), math.inf, clients=1000, spread_ms=900, horizon_ms=20_000),
        'immediate, Poisson arrivals, 3 attempts': lambda: run(10, dict(kind='poisson', ratePerSecond=30), {**ARTICLE_SERVER, 'startupMs': 0, 'outages': [dict(startMs=5000, endMs=15_000)]}, constant(0), 3, 40_000, False, 3),
        'full jitter, 50 000 clients, 20 s': lambda: herd(expo(), math.inf, clients=50_000, horizon_ms=20_000),
        'decorrelated, spread 5 s, 5 attempts': lambda: herd(decorrelated(100, 10_000), 5, clients=3000, spread_ms=5000),
    }
    out = {}
    for name, case in cases.items():
        r = case()
        del r['perTick']
        out[name] = r
    return out


# The fleet: 200 client processes alive at once (300 new requests a second in all, Poisson), each
# replaced after 2 s by a fresh one with a fresh per-process budget, process p's restarts offset by
# p × 10 ms; the budget experiment's downstream (down 5–15 s) and retry policy: 4 attempts, gRPC's
# backoff min(100 × 2^(n−1), 1000) × uniform(0.8, 1.2) ms. load = arrivals ÷ new requests at ticks
# 500..1499; a row's load is the plain mean over its seeds.
class Throttling:
    """gRPC retryThrottling {maxTokens 10, tokenRatio 0.1} (gRFC A6), in thousandths of a token as A6
    keeps them: starts full; a failure takes 1, a success gives 0.1; a retry only while above half."""

    def __init__(self):
        self.milli = 10_000

    def on_attempt(self, now, is_retry):
        pass

    def on_success(self, now):
        self.milli = min(10_000, self.milli + 100)

    def on_failure(self, now):
        self.milli = max(0, self.milli - 1000)

    def allow_retry(self, now):
        return self.milli > 5000


class Ratio:
    """The SRE book's retry ratio as herdless deploys it by default: retries granted ≤ 10 % of the
    requests of the last second (ten 100 ms buckets, the current one included) plus 1; a retry counts
    when it is granted (the +1 in both counts is the one being decided)."""

    def __init__(self):
        self.events = []  # (bucket, is_retry)

    def _counts(self, now):
        k = now // 100
        live = [e for e in self.events if e[0] > k - 10]
        self.events = live
        return sum(1 for e in live if not e[1]), sum(1 for e in live if e[1])

    def on_attempt(self, now, is_retry):
        if not is_retry:
            self.events.append((now // 100, False))

    def on_success(self, now):
        pass

    def on_failure(self, now):
        pass

    def allow_retry(self, now):
        requests, retries = self._counts(now)
        if retries + 1 <= 0.1 * (requests + 1) + 1:
            self.events.append((now // 100, True))
            return True
        return False


class Restarting:
    """A slot that a sequence of processes hold in turn: a fresh budget every `lifetime` ms."""

    def __init__(self, make, lifetime, phase):
        self.make, self.lifetime, self.phase = make, lifetime, phase
        self.generation, self.budget = 0, make()

    def current(self, now):
        g = (now + self.phase) // self.lifetime
        if g != self.generation:
            self.generation, self.budget = g, self.make()
        return self.budget

    def on_attempt(self, now, is_retry):
        self.current(now).on_attempt(now, is_retry)

    def on_success(self, now):
        self.current(now).on_success(now)

    def on_failure(self, now):
        self.current(now).on_failure(now)

    def allow_retry(self, now):
        return self.current(now).allow_retry(now)


def grpc_backoff():
    return {'delay': lambda attempt, prev, rng: min(100 * 2 ** (attempt - 1), 1000) * rng.uniform(0.8, 1.2)}


def fleet_load(make, seed, processes=200, lifetime=2000):
    budget = None if make is None else (lambda slot: Restarting(make, lifetime, slot * lifetime // processes))
    server = {**ARTICLE_SERVER, 'startupMs': 0, 'outages': [dict(startMs=5000, endMs=15_000)]}
    r = run(processes, dict(kind='poisson', ratePerSecond=300 / processes), server, grpc_backoff(), 4, 40_000, False, seed, budget)
    arrivals = sum(r['perTick']['arrivals'][500:1500])
    fresh = sum(r['perTick']['fresh'][500:1500])
    return arrivals / fresh


def fleet():
    rows = {'4 attempts': None, '4 attempts + gRPC throttling per process': Throttling, '4 attempts + 10% retry ratio per process': Ratio}
    return {name: sum(fleet_load(make, seed) for seed in (0, 1)) / 2 for name, make in rows.items()}


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else 'paths'
    if what == 'paths':
        print(json.dumps(paths(), indent=1))
    elif what == 'fleet':
        print(json.dumps(fleet(), indent=1))
    else:
        raise SystemExit(f'unknown: {what}')


if __name__ == '__main__':
    main()
