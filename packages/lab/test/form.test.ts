import { describe, expect, it } from 'vitest';
import { herdBase, herdPolicies } from '../src/experiments/herd.js';
import { BUDGET_POLICIES, budgetScenario } from 'herdless/sim';
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
