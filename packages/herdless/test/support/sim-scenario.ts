import { constantBackoff } from 'herdless';
import { ARTICLE_SERVER, type Scenario } from 'herdless/sim';

/**
 * The smallest run in which a request waits: 2 clients at tick 0, a server that serves 1 per 10 ms
 * tick from the start (no start-up), a constant 10 ms backoff with no attempt cap, a 1 s horizon,
 * stopping when idle — one client is served at tick 0, the other retried at tick 2 and served there.
 * The fields of `over` replace the defaults whole.
 */
export function twoClientScenario(over: Partial<Scenario> = {}): Scenario {
  return {
    clients: 2,
    arrivals: { kind: 'together', spreadMs: 0 },
    server: { ...ARTICLE_SERVER, capacityPerTick: 1, startupMs: 0 },
    policy: { name: 'c', backoff: constantBackoff({ delayMs: 10 }), maxAttempts: Infinity },
    horizonMs: 1000,
    stopWhenIdle: true,
    ...over,
  };
}
