#!/usr/bin/env python3
"""An independent reference for the lab's contention experiment, in plain CPython.

The model of M. Brooker's "Exponential Backoff And Jitter" (AWS Architecture Blog, 2015): N clients
each update one row once under optimistic concurrency. Every message hop takes |normalvariate(10, 2)|
ms. A client reads the row's version, then writes carrying it; the server counts the write as a call
and accepts it only if the version is still current (then the version increases). After a failed
write the client's failure count n rises by one, and its next read reaches the server one hop plus
backoff(n) after the failure answer reached it. Backoffs (base 5 ms, cap 2000 ms, expo(n) =
min(cap, 2**n * base)): none, exponential, equal jitter, full jitter, decorrelated.

Each hop is drawn when its message is sent (the N first reads at the start, client 0 first); a failed
client draws its hop before its backoff. Events at the same instant run in the order they were
scheduled. A run ends when every client has succeeded: its time is the last success answer's arrival,
its calls the writes. Run r = 0..RUNS-1 of every (strategy, clients) cell draws every number from
random.Random(r).

This file shares no code with the lab (TypeScript): it is the independent source of the golden CSV
packages/lab/test/golden/contention.csv. Regenerate it with

    python3 scripts/contention-reference.py > packages/lab/test/golden/contention.csv
"""
import heapq
import random
import sys

BASE = 5.0
CAP = 2000.0
HOP_MEAN = 10.0
HOP_SD = 2.0
CLIENTS = (10, 20, 30, 40, 50)
STRATEGIES = ('exponential', 'decorrelated', 'equal jitter', 'full jitter', 'no backoff')
RUNS = 100

READ, READ_ANSWER, WRITE, WRITE_ANSWER = range(4)


def run(strategy, clients, seed):
    rng = random.Random(seed)
    hop = lambda: abs(rng.normalvariate(HOP_MEAN, HOP_SD))
    failures = [0] * clients
    sleep = [BASE] * clients  # decorrelated jitter's previous sleep, per client
    queue = []
    order = 0

    def schedule(at, kind, client, value):
        nonlocal order
        heapq.heappush(queue, (at, order, kind, client, value))
        order += 1

    def backoff(c):
        n = failures[c]
        if strategy == 'no backoff':
            return 0.0
        if strategy == 'decorrelated':
            sleep[c] = min(CAP, rng.uniform(BASE, sleep[c] * 3))
            return sleep[c]
        v = min(CAP, 2 ** n * BASE)
        if strategy == 'exponential':
            return v
        if strategy == 'full jitter':
            return rng.uniform(0, v)
        if strategy == 'equal jitter':
            return v / 2 + rng.uniform(0, v / 2)
        raise ValueError(strategy)

    for c in range(clients):
        schedule(hop(), READ, c, None)
    version = 0
    calls = 0
    done = 0
    now = 0.0
    while done < clients:
        now, _, kind, c, value = heapq.heappop(queue)
        if kind == READ:
            schedule(now + hop(), READ_ANSWER, c, version)
        elif kind == READ_ANSWER:
            schedule(now + hop(), WRITE, c, value)
        elif kind == WRITE:
            calls += 1
            ok = value == version
            if ok:
                version += 1
            schedule(now + hop(), WRITE_ANSWER, c, ok)
        elif value:
            done += 1
        else:
            failures[c] += 1
            h = hop()
            schedule(now + h + backoff(c), READ, c, None)
    return now, calls


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else RUNS
    print('clients,strategy,time_ms_mean,calls_mean')
    for clients in CLIENTS:
        for strategy in STRATEGIES:
            time_sum = 0.0
            calls_sum = 0
            for seed in range(runs):
                t, calls = run(strategy, clients, seed)
                time_sum += t
                calls_sum += calls
            print('%d,%s,%.2f,%.2f' % (clients, strategy, time_sum / runs, calls_sum / runs))


if __name__ == '__main__':
    main()
