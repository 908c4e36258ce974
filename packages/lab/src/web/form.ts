import { type BackoffSpec } from 'herdless';
import { BACKOFF_KINDS, backoffFromSpec } from 'herdless/sim';
import { ARTICLE_SERVER, BUDGET_POLICIES, budgetPolicy, budgetScenario, HERD_STRATEGIES, herdBackoff, type BudgetPolicyName, type HerdStrategy, type PolicySpec, type ScenarioSpec } from 'herdless/sim';
import { policySpecOf } from '../experiments/policy-spec.js';
import { parseSeeds } from '../seeds.js';
import { ConfigError, parseConfig } from '../config.js';
import type { HerdRun } from '../experiments/herd.js';
import { PAGE_MAX_EVENTS, checkWork } from '../estimate.js';
import { plainNumber } from '../numbers.js';
import { UsageError } from '../usage-error.js';

/*
 * The lab page's form as data, and its validation: the form becomes a lab scenario file and goes
 * through the CLI's own `parseConfig` (and the library's `backoffFromSpec` inside it) and
 * `parseSeeds`, so the page accepts exactly what `npm run lab -- herd --config FILE` accepts and its
 * messages name the same fields. Pure: runs in the page and in Node tests alike.
 */

/** The experiments the page offers: the two herd presets, the budget experiment and the layers experiment. */
export const PAGE_EXPERIMENTS = [
  { id: 'herd', title: '1,000 clients fail together', spreadMs: 0 },
  { id: 'herd-spread', title: 'the same herd, first sends spread over 0–0.9 s', spreadMs: 900 },
  { id: 'budget', title: 'retry budgets during an outage' },
  { id: 'layers', title: 'retry at every layer or at one' },
] as const;

/** Which group of inputs an experiment uses: `herd` for both herd presets. */
export function experimentKind(experiment: string): 'herd' | 'budget' | 'layers' {
  return experiment === 'budget' ? 'budget' : experiment === 'layers' ? 'layers' : 'herd';
}

/** The form's values, as the inputs hold them (text). */
export interface FormValues {
  experiment: string;
  /** A herd strategy name, or `custom`. */
  strategy: string;
  /** The backoff kind (one of BACKOFF_KINDS). */
  kind: string;
  /** The backoff's options by name (initialBackoffMs, …), as text. */
  params: Record<string, string>;
  /** Attempts per request, the first included; empty = no cap. */
  maxAttempts: string;
  clients: string;
  /** Requests served per tick (10 ms). */
  capacity: string;
  crashLimit: string;
  spreadMs: string;
  seeds: string;
  /** Budget: the policies to compare (names of BUDGET_POLICIES). */
  budgetPolicies: string[];
  /** Budget: the outage, s. */
  outageStartS: string;
  outageEndS: string;
  /** Budget: new requests per second of each of the 10 clients (Poisson). */
  ratePerSecond: string;
  /** Layers: services in the chain. */
  depth: string;
  /** Layers: maxAttempts of every caller. */
  attempts: string;
}

/** A validation problem: which input it belongs to, and the message that names the field and the value. */
export interface FormError {
  /** The input's name: `clients`, `capacity`, `crashLimit`, `spreadMs`, `seeds`, `maxAttempts`, `kind`, `param:NAME`, or `form`. */
  input: string;
  message: string;
}

/** The backoff options of a kind, with the library's defaults (read from the library itself). */
export function kindDefaults(kind: (typeof BACKOFF_KINDS)[number]): Record<string, number> {
  const { kind: _kind, ...options } = backoffFromSpec({ kind }).toJSON() as BackoffSpec & Record<string, number>;
  return options;
}

/** The form as the page opens it: the article's herd with exponential backoff, seeds 0–19. */
export function defaultForm(strategy: HerdStrategy = 'exponential'): FormValues {
  return {
    experiment: 'herd',
    ...strategyFields(strategy),
    clients: '1000',
    capacity: String(ARTICLE_SERVER.capacityPerTick),
    crashLimit: String(ARTICLE_SERVER.crashLimit),
    spreadMs: '0',
    seeds: '0-19',
    budgetPolicies: [...BUDGET_POLICIES],
    outageStartS: '5',
    outageEndS: '15',
    ratePerSecond: '30',
    depth: '3',
    attempts: '3',
  };
}

/** The strategy-dependent fields for one of the article's strategies: its backoff kind and options, no attempt cap. */
export function strategyFields(strategy: HerdStrategy): Pick<FormValues, 'strategy' | 'kind' | 'params' | 'maxAttempts'> {
  const { kind, ...options } = herdBackoff(strategy).toJSON() as BackoffSpec & Record<string, number>;
  return { strategy, kind, params: Object.fromEntries(Object.entries(options).map(([k, v]) => [k, String(v)])), maxAttempts: '' };
}

/**
 * Text to a number for the scenario file, read as strictly as the CLI reads its flags (plain
 * decimal: `0x10`, `1e3` or `Infinity` are refused); text that is not one stays text, so the check
 * names the field and the value.
 */
function numeric(text: string): number | string | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  return plainNumber(t) ?? t;
}

/** The scenario file the form stands for (what `npm run lab -- herd --config FILE` would read). */
export function formToScenarioFile(form: FormValues): Record<string, unknown> {
  const herdStrategy = (HERD_STRATEGIES as readonly string[]).includes(form.strategy);
  const backoff: Record<string, unknown> = { kind: form.kind };
  for (const [name, text] of Object.entries(form.params)) backoff[name] = numeric(text);
  const maxAttempts = form.maxAttempts.trim() === '' ? null : numeric(form.maxAttempts);
  return {
    name: 'lab page',
    clients: numeric(form.clients),
    arrivals: { kind: 'together', spreadMs: numeric(form.spreadMs) },
    server: { ...ARTICLE_SERVER, outages: [], capacityPerTick: numeric(form.capacity), crashLimit: numeric(form.crashLimit) },
    horizonMs: 120_000,
    stopWhenIdle: true,
    seeds: form.seeds,
    policies: [{ name: herdStrategy ? form.strategy : `custom ${form.kind}`, backoff, maxAttempts }],
  };
}

const INPUT_OF_FIELD: Record<string, string> = {
  clients: 'clients',
  'server.capacityPerTick': 'capacity',
  'server.crashLimit': 'crashLimit',
  'arrivals.spreadMs': 'spreadMs',
  'policies[0].maxAttempts': 'maxAttempts',
  'policies[0].backoff.kind': 'kind',
};

/** The form input a scenario field belongs to. */
export function inputOfField(field: string): string {
  const param = /^policies\[0\]\.backoff\.(\w+)$/.exec(field);
  if (param && param[1] !== 'kind') return `param:${param[1]}`;
  return INPUT_OF_FIELD[field] ?? 'form';
}

/** A herd run for the page, or the first problem with the form. */
export type FormResult = { ok: true; run: HerdRun; scenario: Record<string, unknown> } | { ok: false; error: FormError };

/** The largest run the page starts: clients × seeds (the immediate strategy sends 12,000 requests per client). */
export const MAX_CLIENT_RUNS = 200_000;

/**
 * Validates the form with the CLI's own rules and turns it into a run.
 * Messages name the field as a scenario file does: `server.capacityPerTick must be ≥ 0, got -1`.
 */
export function validateForm(form: FormValues): FormResult {
  const scenario = formToScenarioFile(form);
  let seeds: number[];
  try {
    const config = parseConfig(scenario, 'form');
    seeds = parseSeeds(form.seeds, 'seeds');
    if (config.base.clients * seeds.length > MAX_CLIENT_RUNS) {
      return { ok: false, error: { input: 'seeds', message: `clients × seeds must be ≤ ${MAX_CLIENT_RUNS} in the page (${config.base.clients} × ${seeds.length}); use the CLI for more` } };
    }
    try {
      checkWork(config.base, config.policies, seeds.length, PAGE_MAX_EVENTS, 'the page', 'use the CLI (npm run lab -- herd --config scenario.json)');
    } catch (error) {
      return { ok: false, error: { input: 'seeds', message: (error as Error).message } };
    }
    return { ok: true, run: { experiment: 'scenario', name: String(scenario.name), base: config.base, policies: config.policies, seeds }, scenario };
  } catch (error) {
    if (error instanceof ConfigError) return { ok: false, error: { input: inputOfField(error.field), message: error.detail } };
    if (error instanceof UsageError) return { ok: false, error: { input: 'seeds', message: error.message } };
    throw error;
  }
}

/** A budget run for the page: the scenario without its policy, the policies, the seeds, and the article's knobs for the token trace. */
export interface BudgetPageRun {
  base: Omit<ScenarioSpec, 'policy'>;
  policies: PolicySpec[];
  seeds: number[];
  ratePerSecond: number;
  outage: { startMs: number; endMs: number };
}

/** A layers run for the page. */
export interface LayersPageRun {
  depth: number;
  attempts: number;
}

/** A run of any of the page's experiments, or the first problem with the form. */
export type PageFormResult =
  | ({ kind: 'herd' } & Extract<FormResult, { ok: true }>)
  | { ok: true; kind: 'budget'; run: BudgetPageRun; scenario: Record<string, unknown> }
  | { ok: true; kind: 'layers'; run: LayersPageRun }
  | { ok: false; error: FormError };

/** The budget experiment's horizon in the page, as in the CLI, ms. */
const BUDGET_HORIZON_MS = 40_000;

/** A number typed into `input`, read like a CLI flag: plain decimal (an integer when `integer`) from min to max. */
function formNumber(input: string, label: string, text: string, min: number, max: number, integer = false): number | FormError {
  const value = plainNumber(text);
  if (value === undefined || value < min || value > max || (integer && !Number.isInteger(value))) {
    return { input, message: `${label} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max} in plain decimal, got ${JSON.stringify(text)}` };
  }
  return value;
}

const isError = (x: unknown): x is FormError => typeof x === 'object' && x !== null && 'message' in x;

/**
 * The scenario file of a budget run: what `npm run lab -- budget --config FILE` reads. The server is
 * the article's (no start-up time), down over the outage; 10 clients with Poisson arrivals, 40 s.
 */
export function budgetScenarioFile(policies: readonly PolicySpec[], ratePerSecond: number | string | undefined, outage: { startMs: unknown; endMs: unknown }, seeds: string): Record<string, unknown> {
  const { policy: _policy, ...article } = budgetScenario('no retry');
  return {
    name: 'lab page budget',
    clients: article.clients,
    arrivals: { kind: 'poisson', ratePerSecond },
    server: { ...article.server, outages: [outage] },
    horizonMs: article.horizonMs,
    stopWhenIdle: article.stopWhenIdle,
    seeds,
    policies,
  };
}

/** Validates the budget inputs with the CLI's rules (`budget --config`), naming the input of each problem. */
export function validateBudgetForm(form: FormValues): PageFormResult {
  const names = form.budgetPolicies.filter((n): n is BudgetPolicyName => (BUDGET_POLICIES as readonly string[]).includes(n));
  if (names.length === 0) return { ok: false, error: { input: 'budgetPolicies', message: 'pick at least one policy' } };
  const start = formNumber('outageStartS', 'outage start (s)', form.outageStartS, 0, BUDGET_HORIZON_MS / 1000);
  if (isError(start)) return { ok: false, error: start };
  // Recovery is judged over the three seconds after the outage, so it must end 3 s before the horizon.
  const end = formNumber('outageEndS', 'outage end (s)', form.outageEndS, 0, BUDGET_HORIZON_MS / 1000 - 3);
  if (isError(end)) return { ok: false, error: end };
  if (!(end > start)) return { ok: false, error: { input: 'outageEndS', message: `outage end (s) must be after its start (${start}), got ${JSON.stringify(form.outageEndS)}` } };
  const rate = formNumber('ratePerSecond', 'arrivals per second per client', form.ratePerSecond, 0.1, 1000);
  if (isError(rate)) return { ok: false, error: rate };
  const policies = names.map((n) => policySpecOf(budgetPolicy(n)));
  const outage = { startMs: Math.round(start * 1000), endMs: Math.round(end * 1000) };
  const scenario = budgetScenarioFile(policies, rate, outage, form.seeds);
  try {
    const config = parseConfig(scenario, 'form');
    const seeds = parseSeeds(form.seeds, 'seeds');
    if (seeds.length * names.length > MAX_BUDGET_RUNS) {
      return { ok: false, error: { input: 'seeds', message: `policies × seeds must be ≤ ${MAX_BUDGET_RUNS} in the page (${names.length} × ${seeds.length}); use the CLI for more` } };
    }
    try {
      checkWork(config.base, config.policies, seeds.length, PAGE_MAX_EVENTS, 'the page', 'use the CLI (npm run lab -- budget --config scenario.json)');
    } catch (error) {
      return { ok: false, error: { input: 'seeds', message: (error as Error).message } };
    }
    return { ok: true, kind: 'budget', run: { base: config.base, policies: config.policies, seeds, ratePerSecond: rate, outage }, scenario };
  } catch (error) {
    if (error instanceof ConfigError) return { ok: false, error: { input: error.field === 'arrivals.ratePerSecond' ? 'ratePerSecond' : 'form', message: error.detail } };
    if (error instanceof UsageError) return { ok: false, error: { input: 'seeds', message: error.message } };
    throw error;
  }
}

/** The most budget runs (policies × seeds) the page starts. */
export const MAX_BUDGET_RUNS = 400;

/** Validates the layers inputs with the CLI's rules (`layers --depth --attempts`). */
export function validateLayersForm(form: FormValues): PageFormResult {
  const depth = formNumber('depth', 'depth', form.depth, 1, 10, true);
  if (isError(depth)) return { ok: false, error: depth };
  const attempts = formNumber('attempts', 'attempts per layer', form.attempts, 1, 10, true);
  if (isError(attempts)) return { ok: false, error: attempts };
  if (attempts ** depth > 100_000) return { ok: false, error: { input: 'attempts', message: `attempts ^ depth is ${attempts}^${depth} calls; keep it ≤ 100000` } };
  return { ok: true, kind: 'layers', run: { depth, attempts } };
}

/** Validates the form for its experiment. */
export function validatePage(form: FormValues): PageFormResult {
  const kind = experimentKind(form.experiment);
  if (kind === 'budget') return validateBudgetForm(form);
  if (kind === 'layers') return validateLayersForm(form);
  const r = validateForm(form);
  return r.ok ? { ...r, kind: 'herd' } : r;
}
