import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';

const valid = () => ({
  clients: 100,
  arrivals: { kind: 'together', spreadMs: 0 },
  server: { tickMs: 10, capacityPerTick: 5, crashWindowTicks: 10, crashLimit: 100, restartMs: 1000, startupMs: 1000 },
  horizonMs: 120_000,
  policies: ['full jitter', { name: 'mine', backoff: { kind: 'equal jitter', initialBackoffMs: 100 }, maxAttempts: 5 }],
});

type Json = Record<string, unknown>;
const edit = (f: (c: Json) => void): Json => {
  const c = valid() as unknown as Json;
  f(c);
  return c;
};

describe('scenario files', () => {
  it('a valid file gives the scenario and its policies', () => {
    const c = parseConfig(valid());
    expect(c.base.server.outages).toEqual([]);
    expect(c.policies.map((p) => p.name)).toEqual(['full jitter', 'mine']);
    expect(c.policies[0]!.backoff).toEqual({ kind: 'full jitter', initialBackoffMs: 200, backoffMultiplier: 2, maxBackoffMs: 10_000 });
    expect(c.policies[1]!.maxAttempts).toBe(5);
  });

  it('seeds may be an array of integers; first sends may spread over the whole horizon', () => {
    const c = parseConfig(edit((c) => ((c.seeds = [4, 0, 7]), (c.arrivals = { kind: 'together', spreadMs: 120_000 }))));
    expect(c.seeds).toEqual([4, 0, 7]);
    expect(c.base.arrivals).toEqual({ kind: 'together', spreadMs: 120_000 });
  });

  it('a policy may carry a retry budget', () => {
    const json = edit((c) => (c.policies = [{ name: 'x', backoff: { kind: 'full jitter' }, maxAttempts: 4, budget: { kind: 'retry throttling', maxTokens: 10, tokenRatio: 0.1 } }]));
    expect(parseConfig(json).policies[0]!.budget).toEqual({ kind: 'retry throttling', maxTokens: 10, tokenRatio: 0.1 });
  });

  it.each<[string, Json, string]>([
    ['negative capacity', edit((c) => ((c.server as Json).capacityPerTick = -5)), 'server.capacityPerTick must be ≥ 0, got -5'],
    ['missing field', edit((c) => delete (c.server as Json).startupMs), 'server.startupMs is missing'],
    ['missing clients', edit((c) => delete c.clients), 'clients is missing'],
    ['string clients', edit((c) => (c.clients = '100')), 'clients must be a number, got "100"'],
    ['fractional clients', edit((c) => (c.clients = 1.5)), 'clients must be an integer, got 1.5'],
    ['unknown field', edit((c) => (c.clinets = 3)), 'clinets is not a known field (did you mean clients?)'],
    // A misspelt key is named, not only the field it misspells found missing.
    ['misspelt key', edit((c) => ((c.clientz = 10), delete c.clients)), 'clientz is not a known field (did you mean clients?)'],
    ['misspelt key, other case', edit((c) => ((c.horizonms = 1000), delete c.horizonMs)), 'horizonms is not a known field (did you mean horizonMs?)'],
    ['key without its unit', edit((c) => ((c.horizon = 1000), delete c.horizonMs)), 'horizon is not a known field (did you mean horizonMs?)'],
    ['misspelt server key', edit((c) => (c.server = { ...(c.server as Json), capacityPerTik: 5, capacityPerTick: undefined })), 'server.capacityPerTik is not a known field (did you mean capacityPerTick?)'],
    ['misspelt arrivals key', edit((c) => (c.arrivals = { kind: 'together', spredMs: 0 })), 'arrivals.spredMs is not a known field (did you mean spreadMs?)'],
    ['misspelt outage key', edit((c) => ((c.server as Json).outages = [{ start: 0, endMs: 10 }])), 'server.outages[0].start is not a known field (did you mean startMs?)'],
    ['misspelt policy key', edit((c) => (c.policies = [{ name: 'x', backof: { kind: 'constant' }, maxAttempts: 3 }])), 'policies[0].backof is not a known field (did you mean backoff?)'],
    ['unknown key, nothing close', edit((c) => (c.colour = 'red')), 'colour is not a known field (the fields here: name, clients, arrivals, server, horizonMs, stopWhenIdle, seeds, policies)'],
    ['bad arrivals kind', edit((c) => (c.arrivals = { kind: 'burst' })), 'arrivals.kind must be "together" or "poisson", got "burst"'],
    ['horizon not whole ticks', edit((c) => (c.horizonMs = 1005)), 'horizonMs must be a whole number of ticks (tickMs 10), got 1005'],
    ['outage backwards', edit((c) => ((c.server as Json).outages = [{ startMs: 500, endMs: 100 }])), 'server.outages[0].endMs must be > startMs (500), got 100'],
    ['unknown strategy', edit((c) => (c.policies = ['full jiter'])), 'policies[0] must be a herd strategy name'],
    ['bad backoff', edit((c) => (c.policies = [{ name: 'x', backoff: { kind: 'full jitter', maxBackoffMs: -1 }, maxAttempts: null }])), 'policies[0].backoff.maxBackoffMs must be ≥ 0, got -1'],
    ['backoff typo', edit((c) => (c.policies = [{ name: 'x', backoff: { kind: 'full jitter', initialBackofMs: 1 }, maxAttempts: null }])), 'policies[0].backoff.initialBackofMs is not an option of "full jitter"'],
    ['no policies', edit((c) => (c.policies = [])), 'policies must be ≥ 1 entries'],
    ['duplicate names', edit((c) => (c.policies = ['full jitter', 'full jitter'])), 'policies[1].name "full jitter" is used twice'],
    ['zero maxAttempts', edit((c) => (c.policies = [{ name: 'x', backoff: { kind: 'constant' }, maxAttempts: 0 }])), 'policies[0].maxAttempts must be ≥ 1, got 0'],
    ['bad budget', edit((c) => (c.policies = [{ name: 'x', backoff: { kind: 'constant' }, maxAttempts: 3, budget: { kind: 'retry throttling', maxTokens: 0 } }])), 'policies[0].budget.maxTokens must be > 0, got 0'],
    ['unknown budget', edit((c) => (c.policies = [{ name: 'x', backoff: { kind: 'constant' }, maxAttempts: 3, budget: { kind: 'bucket' } }])), 'policies[0].budget.kind must be one of'],
    ['backoff kind typo', edit((c) => (c.policies = [{ name: 'x', backoff: { kind: 'full jiter' }, maxAttempts: 3 }])), 'policies[0].backoff.kind must be one of'],
    ['herd strategy in other case', edit((c) => (c.policies = ['Full Jitter'])), 'policies[0] must be a herd strategy name (immediate, fixed 1s, exponential, full jitter, equal jitter, decorrelated) or {name, backoff, maxAttempts}, got "Full Jitter" (did you mean "full jitter"?)'],
    ['misspelt arrivals kind', edit((c) => (c.arrivals = { kind: 'togther', spreadMs: 0 })), 'arrivals.kind must be "together" or "poisson", got "togther" (did you mean "together"?)'],
    ['backoff kind in other case', edit((c) => (c.policies = [{ name: 'x', backoff: { kind: 'Exponential' }, maxAttempts: 3 }])), 'policies[0].backoff.kind must be one of "constant", "exponential", "full jitter", "equal jitter", "proportional jitter", "decorrelated jitter", "decorrelated jitter v2", got "Exponential" (did you mean "exponential"?)'],
    ['policy missing maxAttempts', edit((c) => (c.policies = [{ name: 'x', backoff: { kind: 'constant' } }])), 'policies[0].maxAttempts is missing'],
    ['too much work', edit((c) => ((c.clients = 10_000_000), (c.horizonMs = 86_400_000))), 'clients × horizon ticks is 10000000 × 8640000; keep it ≤ 1.2e10'],
    ['not an object', [] as unknown as Json, '(top level) must be an object'],
    ['fractional seed', edit((c) => (c.seeds = [1.5])), 'seeds must be text such as "0-19" or a non-empty array of integers ≥ 0, got [1.5]'],
    ['seeds a number', edit((c) => (c.seeds = 5)), 'seeds must be text such as "0-19" or a non-empty array of integers ≥ 0, got 5'],
    ['negative seed', edit((c) => (c.seeds = [0, -1])), 'seeds[1] must be ≥ 0, got -1'],
    ['seed twice', edit((c) => (c.seeds = [3, 1, 3])), 'seeds must list each seed once, got 3 twice in [3,1,3]'],
    ['spread past the horizon', edit((c) => (c.arrivals = { kind: 'together', spreadMs: 1e9 })), 'arrivals.spreadMs must be ≤ horizonMs (120000): first sends after the horizon never happen, got 1000000000'],
  ])('%s', (_name, json, message) => {
    expect(() => parseConfig(json, 'cfg')).toThrow(`cfg: ${message}`);
  });
});
