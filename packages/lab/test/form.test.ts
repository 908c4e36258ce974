import { describe, expect, it } from 'vitest';
import { herdBase, herdPolicies } from '../src/experiments/herd.js';
import { BUDGET_POLICIES, CONTENTION_STRATEGIES, HEDGING_LOADS, HEDGING_POLICIES, METASTABLE_POLICIES, METASTABLE_SETUP, budgetScenario, metastableCombinations } from 'herdless/sim';
import { CONTENTION_DEFAULTS } from '../src/experiments/contention.js';
import { DEFAULT_HEDGING_RUN } from '../src/experiments/hedging.js';
import { defaultForm, inputOfField, kindDefaults, strategyFields, validateForm, validatePage, type FormValues } from '../src/web/form.js';

const edit = (change: Partial<FormValues>, base: FormValues = defaultForm()): FormValues => ({ ...base, ...change });
const param = (name: string, value: string): Partial<FormValues> => ({ params: { ...defaultForm().params, [name]: value } });

describe('the lab page’s form', () => {
  it('opens on the CLI’s herd preset: same scenario, same policy, seeds 0–19', () => {
    const r = validateForm(defaultForm());
    if (!r.ok) throw new Error(r.error.message);
    expect(r.run.base).toEqual(herdBase(0));
    expect(r.run.policies).toEqual(herdPolicies(['exponential']));
    expect(r.run.seeds).toEqual([...Array(20).keys()]);
  });

  it.each(['immediate', 'fixed 1s', 'full jitter', 'equal jitter', 'decorrelated'] as const)('%s with the spread preset is the CLI’s --spread 0.9 run', (s) => {
    const r = validateForm(edit({ ...strategyFields(s), spreadMs: '900' }));
    if (!r.ok) throw new Error(r.error.message);
    expect(r.run.base).toEqual(herdBase(900));
    expect(r.run.policies).toEqual(herdPolicies([s]));
  });

  it('a custom backoff becomes a policy of the scenario file', () => {
    const r = validateForm(edit({ strategy: 'custom', kind: 'proportional jitter', params: { ...Object.fromEntries(Object.entries(kindDefaults('proportional jitter')).map(([k, v]) => [k, String(v)])) }, maxAttempts: '5' }));
    if (!r.ok) throw new Error(r.error.message);
    expect(r.run.policies).toEqual([
      { name: 'custom proportional jitter', backoff: { kind: 'proportional jitter', initialBackoffMs: 100, backoffMultiplier: 2, maxBackoffMs: 10_000, jitter: 0.2 }, maxAttempts: 5 },
    ]);
    expect(r.scenario).toMatchObject({ clients: 1000, seeds: '0-19', horizonMs: 120_000 });
  });

  it.each<[string, Partial<FormValues>, string, string]>([
    ['negative capacity', { capacity: '-1' }, 'capacity', 'server.capacityPerTick must be ≥ 0, got -1'],
    ['text clients', { clients: 'many' }, 'clients', 'clients must be a number, got "many"'],
    ['empty clients', { clients: ' ' }, 'clients', 'clients is missing'],
    ['fractional crash limit', { crashLimit: '1.5' }, 'crashLimit', 'server.crashLimit must be an integer, got 1.5'],
    ['negative spread', { spreadMs: '-5' }, 'spreadMs', 'arrivals.spreadMs must be ≥ 0, got -5'],
    ['zero attempts', { maxAttempts: '0' }, 'maxAttempts', 'policies[0].maxAttempts must be ≥ 1, got 0'],
    ['negative cap', param('maxBackoffMs', '-1'), 'param:maxBackoffMs', 'policies[0].backoff.maxBackoffMs must be ≥ 0, got -1'],
    ['text multiplier', param('backoffMultiplier', 'x'), 'param:backoffMultiplier', 'policies[0].backoff.backoffMultiplier must be'],
    ['seeds going down', { seeds: '5-1' }, 'seeds', 'seeds "5-1": the range 5-1 goes down'],
    ['no seeds', { seeds: '' }, 'seeds', 'seeds "": expected seeds such as 0-19'],
    ['too much work', { clients: '100000', seeds: '0-19' }, 'seeds', 'clients × seeds must be ≤ 200000 in the page'],
    // Numbers are read as strictly as the CLI reads its flags.
    ['hex clients', { clients: '0x10' }, 'clients', 'clients must be a number, got "0x10"'],
    ['exponent capacity', { capacity: '1e1' }, 'capacity', 'server.capacityPerTick must be a number, got "1e1"'],
    ['Infinity spread', { spreadMs: 'Infinity' }, 'spreadMs', 'arrivals.spreadMs must be a number, got "Infinity"'],
    ['fractional max attempts', { maxAttempts: '2.5' }, 'maxAttempts', 'policies[0].maxAttempts must be an integer, got 2.5'],
    ['text max attempts', { maxAttempts: 'lots' }, 'maxAttempts', 'policies[0].maxAttempts must be'],
    ['hex backoff option', param('maxBackoffMs', '0x10'), 'param:maxBackoffMs', 'policies[0].backoff.maxBackoffMs must be'],
  ])('%s: the message names the field, beside its input', (_name, change, inputName, message) => {
    const r = validateForm(edit(change));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.input).toBe(inputName);
    expect(r.error.message).toContain(message);
  });

  it.each([
    ['clients', 'clients'],
    ['server.capacityPerTick', 'capacity'],
    ['policies[0].backoff.initialBackoffMs', 'param:initialBackoffMs'],
    ['policies[0].backoff.kind', 'kind'],
    ['horizonMs', 'form'],
  ])('field %s belongs to input %s', (field, name) => {
    expect(inputOfField(field)).toBe(name);
  });
});

describe('the page’s budget and layers forms', () => {
  const budget = (change: Partial<FormValues> = {}) => validatePage(edit({ experiment: 'budget', seeds: '0-1', ...change }));
  const layers = (change: Partial<FormValues> = {}) => validatePage(edit({ experiment: 'layers', ...change }));

  it('budget opens on the article’s set-up: every policy, the outage at 5–15 s, 30 requests/s per client', () => {
    const r = budget();
    if (!r.ok || r.kind !== 'budget') throw new Error('expected a budget run');
    expect(r.run.policies.map((p) => p.name)).toEqual([...BUDGET_POLICIES]);
    expect(r.run.outage).toEqual({ startMs: 5000, endMs: 15_000 });
    expect(r.run.seeds).toEqual([0, 1]);
    const { policy: _policy, ...article } = budgetScenario('no retry');
    expect(r.run.base).toEqual(article);
    expect(r.scenario).toMatchObject({ clients: 10, arrivals: { kind: 'poisson', ratePerSecond: 30 }, horizonMs: 40_000, seeds: '0-1' });
  });

  it('layers reads depth and attempts', () => {
    expect(layers({ depth: '4', attempts: '2' })).toEqual({ ok: true, kind: 'layers', run: { depth: 4, attempts: 2 } });
  });

  it.each<[string, () => ReturnType<typeof validatePage>, string, string]>([
    ['no policy', () => budget({ budgetPolicies: [] }), 'budgetPolicies', 'pick at least one policy'],
    ['hex outage start', () => budget({ outageStartS: '0x5' }), 'outageStartS', 'outage start (s) must be a number from 0 to 40 in plain decimal, got "0x5"'],
    ['outage past 37 s', () => budget({ outageEndS: '38' }), 'outageEndS', 'outage end (s) must be a number from 0 to 37'],
    ['outage ending first', () => budget({ outageStartS: '9', outageEndS: '8' }), 'outageEndS', 'outage end (s) must be after its start (9), got "8"'],
    ['zero rate', () => budget({ ratePerSecond: '0' }), 'ratePerSecond', 'arrivals per second per client must be a number from 0.1 to 1000'],
    ['bad seeds', () => budget({ seeds: '3-1' }), 'seeds', 'seeds "3-1"'],
    ['too many runs', () => budget({ seeds: '0-99' }), 'seeds', 'policies × seeds must be ≤ 400 in the page (9 × 100)'],
    ['fractional depth', () => layers({ depth: '2.5' }), 'depth', 'depth must be an integer from 1 to 10 in plain decimal, got "2.5"'],
    ['too many calls', () => layers({ depth: '10', attempts: '4' }), 'attempts', 'attempts ^ depth is 4^10 calls; keep it ≤ 100000'],
  ])('%s: refused beside its input', (_name, check, inputName, message) => {
    const r = check();
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.input).toBe(inputName);
    expect(r.error.message).toContain(message);
  });
});

describe('the page’s hedging, contention and metastable forms', () => {
  const hedging = (change: Partial<FormValues> = {}) => validatePage(edit({ experiment: 'hedging', ...change }));
  const contention = (change: Partial<FormValues> = {}) => validatePage(edit({ experiment: 'contention', ...change }));
  const metastable = (change: Partial<FormValues> = {}) => validatePage(edit({ experiment: 'metastable', metastableTable: 'cross', ...change }));
  const report = (change: Partial<FormValues> = {}) => validatePage(edit({ experiment: 'metastable', ...change }));

  it('hedging opens on the CLI’s (and the report’s) run', () => {
    expect(hedging()).toEqual({ ok: true, kind: 'hedging', run: { ...DEFAULT_HEDGING_RUN, policies: [...HEDGING_POLICIES], loads: [...HEDGING_LOADS], seeds: [0, 1, 2] } });
  });

  it('hedging reads loads as the CLI’s --loads (percent, sorted), and every setting', () => {
    const r = hedging({ loads: ' 90, 10 ', hedgingPolicies: ['fixed delay', 'no hedging'], delayMs: '20', percentile: '99', budgetRatio: '0.05', hedgeAttempts: '3', durationS: '5', hedgingSeeds: '4,7' });
    if (!r.ok || r.kind !== 'hedging') throw new Error('expected a hedging run');
    // Policies in the table's order, whatever the order they were checked in.
    expect(r.run).toEqual({ policies: ['no hedging', 'fixed delay'], loads: [0.1, 0.9], seeds: [4, 7], settings: { maxAttempts: 3, delayMs: 20, percentile: 99, budgetRatio: 0.05 }, durationMs: 5000 });
  });

  it('contention opens on the 2015 post’s table and reads client counts', () => {
    expect(contention()).toEqual({ ok: true, kind: 'contention', run: { strategies: [...CONTENTION_STRATEGIES], clients: [10, 20, 30, 40, 50], seeds: CONTENTION_DEFAULTS.seeds } });
    const r = contention({ contentionClients: '5, 100', contentionStrategies: ['full jitter'], contentionSeeds: '0-9' });
    expect(r).toEqual({ ok: true, kind: 'contention', run: { strategies: ['full jitter'], clients: [5, 100], seeds: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] } });
  });

  it('metastable opens on the report’s table, as `npm run lab -- metastable` runs it (no scenario file says it)', () => {
    const r = report();
    expect(r).toEqual({ ok: true, kind: 'metastable', run: { setup: METASTABLE_SETUP, combinations: metastableCombinations(), seeds: Array.from({ length: 20 }, (_, i) => i) }, scenario: null, viaFlags: true });
    const spike = report({ triggerKind: 'spike', triggerFactor: '2' });
    expect(spike.ok && spike.kind === 'metastable' && spike.run.setup.trigger).toEqual({ kind: 'spike', startMs: 10_000, endMs: 15_000, factor: 2 });
  });

  it('a metastable cross starts from every client policy against the FIFO server, as `--servers FIFO` runs it', () => {
    const r = metastable();
    if (!r.ok || r.kind !== 'metastable') throw new Error('expected a metastable run');
    expect(r.viaFlags).toBe(true);
    expect(r.run.name).toBeUndefined();
    expect(r.run.setup).toEqual(METASTABLE_SETUP);
    expect(r.run.seeds).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(r.run.combinations).toEqual(METASTABLE_POLICIES.map((policy) => ({ policy, server: 'FIFO', overrides: {} })));
  });

  it('metastable crosses the policies and servers checked; a trigger of its own goes through the scenario file', () => {
    const r = metastable({ metastablePolicies: ['3 retries'], metastableServers: ['FIFO', 'drop expired'], triggerKind: 'spike', triggerFactor: '3', triggerEndS: '12.5', metastableSeeds: '0-1' });
    if (!r.ok || r.kind !== 'metastable') throw new Error('expected a metastable run');
    expect(r.viaFlags).toBe(false);
    expect(r.run.name).toBe('lab page');
    expect(r.run.setup.trigger).toEqual({ kind: 'spike', startMs: 10_000, endMs: 12_500, factor: 3 });
    expect(r.run.combinations.map((c) => [c.policy.name, c.server, c.overrides])).toEqual([
      ['3 retries', 'FIFO', {}],
      ['3 retries', 'drop expired', { dropExpired: true }],
    ]);
    expect(r.scenario).toMatchObject({ name: 'lab page', seeds: '0-1', trigger: { kind: 'spike', startMs: 10_000, endMs: 12_500, factor: 3 }, servers: { FIFO: {}, 'drop expired': { dropExpired: true } } });
    // The default spike is what `--trigger spike` runs.
    const spike = metastable({ triggerKind: 'spike', triggerFactor: '2' });
    expect(spike.ok && spike.kind === 'metastable' && spike.viaFlags).toBe(true);
  });

  it.each<[string, () => ReturnType<typeof validatePage>, string, string]>([
    ['no hedging client', () => hedging({ hedgingPolicies: [] }), 'hedgingPolicies', 'pick at least one client'],
    ['a load over 100%', () => hedging({ loads: '10,150' }), 'loads', 'each offered load (% of capacity) must be a number from 1 to 100 in plain decimal, got "150"'],
    ['a load twice', () => hedging({ loads: '10,20,10' }), 'loads', 'offered loads: "10" is listed twice'],
    ['an empty load', () => hedging({ loads: '10,,20' }), 'loads', 'got ""'],
    ['a budget ratio over 1', () => hedging({ budgetRatio: '2' }), 'budgetRatio', 'budget ratio must be a number from 0 to 1 in plain decimal, got "2"'],
    ['a hex delay', () => hedging({ delayMs: '0x10' }), 'delayMs', 'hedge delay (ms) must be a number from 0 to 60000 in plain decimal, got "0x10"'],
    ['fractional attempts', () => hedging({ hedgeAttempts: '2.5' }), 'hedgeAttempts', 'attempts per call must be an integer from 1 to 10'],
    ['percentile 100', () => hedging({ percentile: '100' }), 'percentile', 'percentile must be a number from 1 to 99.9'],
    ['a 2 s duration', () => hedging({ durationS: '2' }), 'durationS', 'duration (s) must be a number from 3 to 600'],
    ['bad hedging seeds', () => hedging({ hedgingSeeds: '2-1' }), 'hedgingSeeds', 'seeds "2-1"'],
    ['too much hedging', () => hedging({ durationS: '600' }), 'hedgingSeeds', 'loads × clients × seeds × duration is 90000 s of simulated arrivals; keep it ≤ 10000'],
    ['no strategy', () => contention({ contentionStrategies: [] }), 'contentionStrategies', 'pick at least one strategy'],
    ['no clients', () => contention({ contentionClients: '0' }), 'contentionClients', 'each client count must be an integer from 1 to 1000 in plain decimal, got "0"'],
    ['a count twice', () => contention({ contentionClients: '10,10' }), 'contentionClients', 'client counts: 10 is listed twice'],
    ['too much contention', () => contention({ contentionClients: '1000', contentionSeeds: '0-99' }), 'contentionSeeds', 'seeds × strategies × the sum of clients² is 5.00e8; keep it ≤ 1e8'],
    ['no client policy', () => metastable({ metastablePolicies: [] }), 'metastablePolicies', 'pick at least one client policy'],
    ['no server', () => metastable({ metastableServers: [] }), 'metastableServers', 'pick at least one server'],
    ['a spike below 1', () => metastable({ triggerKind: 'spike', triggerFactor: '0.5' }), 'triggerFactor', 'trigger.factor must be ≥ 1, got 0.5'],
    ['a trigger too late', () => metastable({ triggerEndS: '58' }), 'triggerEndS', 'trigger.endMs must be ≤ 57000, got 58000'],
    ['a trigger ending first', () => metastable({ triggerStartS: '20', triggerEndS: '15' }), 'triggerEndS', 'trigger.endMs must be ≥ 20000, got 15000'],
    ['a hex rate', () => metastable({ metastableRate: '0x10' }), 'metastableRate', 'ratePerSecond must be a number, got "0x10"'],
    ['an emptied timeout', () => metastable({ timeoutS: ' ' }), 'timeoutS', 'timeoutMs is empty'],
    ['bad metastable seeds', () => metastable({ metastableSeeds: 'x' }), 'metastableSeeds', 'seeds "x"'],
    ['the report’s table with a trigger of its own', () => report({ triggerEndS: '12' }), 'metastableTable', 'the report’s table runs with the default trigger, rate and timeout, or the default spike'],
    ['the report’s table, a bad factor', () => report({ triggerFactor: '2' }), 'triggerFactor', 'trigger.factor must be ≤ 1, got 2'],
    ['neither report nor cross', () => report({ metastableTable: 'both' }), 'metastableTable', 'combinations must be "report" or "cross", got "both"'],
    ['too much metastable work', () => metastable({ metastableServers: ['FIFO', 'LIFO', 'drop expired', 'shedding'], metastableSeeds: '0-99' }), 'metastableSeeds', 'combinations × seeds × new requests a run is 3.36e7; keep it ≤ 2e7'],
  ])('%s: refused beside its input', (_name, check, inputName, message) => {
    const r = check();
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.input).toBe(inputName);
    expect(r.error.message).toContain(message);
  });
});
