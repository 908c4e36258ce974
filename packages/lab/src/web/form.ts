import { type BackoffSpec } from 'herdless';
import { BACKOFF_KINDS, backoffFromSpec } from 'herdless/sim';
import { CONTENTION_CLIENTS, CONTENTION_STRATEGIES, HEDGING_LOADS, HEDGING_POLICIES, HEDGING_SETTINGS, METASTABLE_POLICIES, METASTABLE_SERVERS, METASTABLE_SETUP, formatFixed, metastableCombinations } from 'herdless/sim';
import { ARTICLE_SERVER, BUDGET_POLICIES, budgetPolicy, budgetScenario, HERD_STRATEGIES, herdBackoff, type BudgetPolicyName, type HerdStrategy, type PolicySpec, type ScenarioSpec } from 'herdless/sim';
import { policySpecOf } from '../experiments/policy-spec.js';
import { parseSeeds, seedText } from '../seeds.js';
import { ConfigError, parseConfig } from '../config.js';
import type { HerdRun } from '../experiments/herd.js';
import { DEFAULT_HEDGING_RUN, type HedgingRun } from '../experiments/hedging.js';
import { CONTENTION_DEFAULTS, type ContentionSettings } from '../experiments/contention.js';
import type { MetastableSettings } from '../experiments/metastable.js';
import { parseMetastableConfig } from '../metastable-config.js';
import { PAGE_MAX_EVENTS, checkWork } from '../estimate.js';
import { plainNumber } from '../numbers.js';
import { UsageError } from '../usage-error.js';

/*
 * The lab page's form as data, and its validation: the form becomes a lab scenario file and goes
 * through the CLI's own `parseConfig` (and the library's `backoffFromSpec` inside it) and
 * `parseSeeds`, so the page accepts exactly what `npm run lab -- herd --config FILE` accepts and its
 * messages name the same fields. Pure: runs in the page and in Node tests alike.
 */

/** The experiments the page offers: the two herd presets, then one preset per experiment of the CLI. */
export const PAGE_EXPERIMENTS = [
  { id: 'herd', title: '1,000 clients fail together', spreadMs: 0 },
  { id: 'herd-spread', title: 'the same herd, first sends spread over 0–0.9 s', spreadMs: 900 },
  { id: 'budget', title: 'retry budgets during an outage' },
  { id: 'layers', title: 'retry at every layer or at one' },
  { id: 'hedging', title: 'hedging against a latency tail' },
  { id: 'contention', title: 'contention for one row (2015)' },
  { id: 'metastable', title: 'the metastable queue' },
] as const;

/** The page's experiments, as the groups of inputs and results they use (`herd` for both herd presets). */
export type PageExperiment = 'herd' | 'budget' | 'layers' | 'hedging' | 'contention' | 'metastable';

const OWN_GROUP: readonly string[] = ['budget', 'layers', 'hedging', 'contention', 'metastable'];

/** Which group of inputs an experiment uses: `herd` for both herd presets. */
export function experimentKind(experiment: string): PageExperiment {
  return OWN_GROUP.includes(experiment) ? (experiment as PageExperiment) : 'herd';
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
  /** Hedging: the clients to compare (names of HEDGING_POLICIES). */
  hedgingPolicies: string[];
  /** Hedging: offered loads, % of capacity, comma-separated (`--loads`). */
  loads: string;
  /** Hedging: attempts per hedged call, the first included (`--max-attempts`). */
  hedgeAttempts: string;
  /** Hedging: the fixed hedge delay, ms (`--delay`). */
  delayMs: string;
  /** Hedging: the percentile policy's percentile (`--percentile`). */
  percentile: string;
  /** Hedging: the budget's ratio, hedges per request (`--budget-ratio`). */
  budgetRatio: string;
  /** Hedging: seconds of arrivals per run (`--duration`). */
  durationS: string;
  hedgingSeeds: string;
  /** Contention: the strategies (names of CONTENTION_STRATEGIES). */
  contentionStrategies: string[];
  /** Contention: client counts, comma-separated (`--clients`). */
  contentionClients: string;
  contentionSeeds: string;
  /**
   * Metastable: `report`, the report's table (every policy on FIFO, 3 retries on each other server:
   * `npm run lab -- metastable`), or `cross`, each policy checked on each server checked.
   */
  metastableTable: string;
  /** Metastable, cross: the client policies (names of METASTABLE_POLICIES), each run on every server checked. */
  metastablePolicies: string[];
  /** Metastable: the server variants (names of METASTABLE_SERVERS). */
  metastableServers: string[];
  /** Metastable: `capacity` (the server slowed) or `spike` (more new requests). */
  triggerKind: string;
  /** Metastable: the trigger's window, s, and its factor. */
  triggerStartS: string;
  triggerEndS: string;
  triggerFactor: string;
  /** Metastable: new requests per second (Poisson). */
  metastableRate: string;
  /** Metastable: the client's timeout per attempt, s. */
  timeoutS: string;
  metastableSeeds: string;
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
    ...hedgingDefaults(),
    ...contentionDefaults(),
    ...metastableDefaults(),
  };
}

const percent = (load: number): string => formatFixed(load * 100, 0);

/** The hedging inputs at the CLI's defaults (the report's run). */
function hedgingDefaults(): Pick<FormValues, 'hedgingPolicies' | 'loads' | 'hedgeAttempts' | 'delayMs' | 'percentile' | 'budgetRatio' | 'durationS' | 'hedgingSeeds'> {
  return {
    hedgingPolicies: [...HEDGING_POLICIES],
    loads: HEDGING_LOADS.map(percent).join(','),
    hedgeAttempts: String(HEDGING_SETTINGS.maxAttempts),
    delayMs: String(HEDGING_SETTINGS.delayMs),
    percentile: String(HEDGING_SETTINGS.percentile),
    budgetRatio: String(HEDGING_SETTINGS.budgetRatio),
    durationS: String(DEFAULT_HEDGING_RUN.durationMs / 1000),
    hedgingSeeds: seedText(DEFAULT_HEDGING_RUN.seeds),
  };
}

/** The contention inputs at the CLI's defaults (the 2015 post's table). */
function contentionDefaults(): Pick<FormValues, 'contentionStrategies' | 'contentionClients' | 'contentionSeeds'> {
  return { contentionStrategies: [...CONTENTION_STRATEGIES], contentionClients: CONTENTION_CLIENTS.join(','), contentionSeeds: seedText(CONTENTION_DEFAULTS.seeds) };
}

/** The default factor of a trigger kind: the server at half speed, or new requests at twice the rate. */
export function triggerFactorDefault(kind: string): string {
  return kind === 'spike' ? '2' : String(METASTABLE_SETUP.trigger.factor);
}

/** The metastable inputs: the report's table (and, for a cross, every client policy on the FIFO server), the CLI's trigger and seeds. */
function metastableDefaults(): Pick<
  FormValues,
  'metastableTable' | 'metastablePolicies' | 'metastableServers' | 'triggerKind' | 'triggerStartS' | 'triggerEndS' | 'triggerFactor' | 'metastableRate' | 'timeoutS' | 'metastableSeeds'
> {
  const u = METASTABLE_SETUP;
  return {
    metastableTable: 'report',
    metastablePolicies: METASTABLE_POLICIES.map((p) => p.name),
    metastableServers: ['FIFO'],
    triggerKind: u.trigger.kind,
    triggerStartS: String(u.trigger.startMs / 1000),
    triggerEndS: String(u.trigger.endMs / 1000),
    triggerFactor: String(u.trigger.factor),
    metastableRate: String(u.ratePerSecond),
    timeoutS: String(u.timeoutMs / 1000),
    metastableSeeds: '0-19',
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
  | { ok: true; kind: 'hedging'; run: HedgingRun }
  | { ok: true; kind: 'contention'; run: ContentionSettings }
  | { ok: true; kind: 'metastable'; run: MetastableSettings; scenario: Record<string, unknown> | null; viaFlags: boolean }
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

/** Seeds typed into `input`, read as `--seeds` is. */
function formSeeds(input: string, text: string): number[] | FormError {
  try {
    return parseSeeds(text, 'seeds');
  } catch (error) {
    if (error instanceof UsageError) return { input, message: error.message };
    throw error;
  }
}

/** The most hedging runs' seconds (loads × policies × seeds × duration) the page starts: about 25 s of simulation; the report's run is 3,000. */
export const MAX_HEDGING_RUN_SECONDS = 10_000;

/** Validates the hedging inputs with the CLI's ranges (`hedging --loads --policies --max-attempts --delay --percentile --budget-ratio --duration --seeds`). */
export function validateHedgingForm(form: FormValues): PageFormResult {
  const policies = HEDGING_POLICIES.filter((p) => form.hedgingPolicies.includes(p));
  if (policies.length === 0) return { ok: false, error: { input: 'hedgingPolicies', message: 'pick at least one client' } };
  const loads: number[] = [];
  for (const part of form.loads.split(',')) {
    const load = formNumber('loads', 'each offered load (% of capacity)', part, 1, 100);
    if (isError(load)) return { ok: false, error: load };
    if (loads.includes(load / 100)) return { ok: false, error: { input: 'loads', message: `offered loads: ${JSON.stringify(part.trim())} is listed twice` } };
    loads.push(load / 100);
  }
  loads.sort((a, b) => a - b);
  const maxAttempts = formNumber('hedgeAttempts', 'attempts per call', form.hedgeAttempts, 1, 10, true);
  if (isError(maxAttempts)) return { ok: false, error: maxAttempts };
  const delayMs = formNumber('delayMs', 'hedge delay (ms)', form.delayMs, 0, 60_000);
  if (isError(delayMs)) return { ok: false, error: delayMs };
  const percentile = formNumber('percentile', 'percentile', form.percentile, 1, 99.9);
  if (isError(percentile)) return { ok: false, error: percentile };
  const budgetRatio = formNumber('budgetRatio', 'budget ratio', form.budgetRatio, 0, 1);
  if (isError(budgetRatio)) return { ok: false, error: budgetRatio };
  const durationS = formNumber('durationS', 'duration (s)', form.durationS, 3, 600);
  if (isError(durationS)) return { ok: false, error: durationS };
  const seeds = formSeeds('hedgingSeeds', form.hedgingSeeds);
  if (isError(seeds)) return { ok: false, error: seeds };
  const work = loads.length * policies.length * seeds.length * durationS;
  if (work > MAX_HEDGING_RUN_SECONDS) {
    return {
      ok: false,
      error: { input: 'hedgingSeeds', message: `loads × clients × seeds × duration is ${formatFixed(work, 0)} s of simulated arrivals; keep it ≤ ${MAX_HEDGING_RUN_SECONDS} in the page, or use the CLI` },
    };
  }
  return { ok: true, kind: 'hedging', run: { policies, loads, seeds, settings: { maxAttempts, delayMs, percentile, budgetRatio }, durationMs: Math.round(durationS * 1000) } };
}

/** The most contention clients in one run, as the CLI's `--clients`. */
export const CONTENTION_MAX_CLIENTS = 1000;
/** The page's bound on seeds × strategies × Σ clients² (the default table's is 2.75e6, well under a second). */
export const PAGE_CONTENTION_MAX_WORK = 1e8;

/** Validates the contention inputs as the CLI reads `contention --clients --strategies --seeds`. */
export function validateContentionForm(form: FormValues): PageFormResult {
  const strategies = CONTENTION_STRATEGIES.filter((s) => form.contentionStrategies.includes(s));
  if (strategies.length === 0) return { ok: false, error: { input: 'contentionStrategies', message: 'pick at least one strategy' } };
  const clients: number[] = [];
  for (const part of form.contentionClients.split(',')) {
    const n = formNumber('contentionClients', 'each client count', part, 1, CONTENTION_MAX_CLIENTS, true);
    if (isError(n)) return { ok: false, error: n };
    if (clients.includes(n)) return { ok: false, error: { input: 'contentionClients', message: `client counts: ${n} is listed twice` } };
    clients.push(n);
  }
  const seeds = formSeeds('contentionSeeds', form.contentionSeeds);
  if (isError(seeds)) return { ok: false, error: seeds };
  const work = seeds.length * strategies.length * clients.reduce((a, n) => a + n * n, 0);
  if (work > PAGE_CONTENTION_MAX_WORK) {
    return {
      ok: false,
      error: { input: 'contentionSeeds', message: `seeds × strategies × the sum of clients² is ${work.toExponential(2).replace('e+', 'e')}; keep it ≤ 1e8 in the page, or use the CLI` },
    };
  }
  return { ok: true, kind: 'contention', run: { strategies, clients, seeds } };
}

/** The page's bound on metastable work: combinations × seeds × new requests per run (the report's table on seeds 0–19 is 2.4e6, a few seconds). */
export const PAGE_METASTABLE_MAX_REQUESTS = 2e7;

const METASTABLE_INPUT: Record<string, string> = {
  'trigger.kind': 'triggerKind',
  'trigger.startMs': 'triggerStartS',
  'trigger.endMs': 'triggerEndS',
  'trigger.factor': 'triggerFactor',
  ratePerSecond: 'metastableRate',
  timeoutMs: 'timeoutS',
};

/**
 * The metastable scenario file the form stands for (`npm run lab -- metastable --config FILE`): the
 * trigger, the rate and timeout, the policies checked (as data) and the servers checked (by their
 * overrides). Numbers that are not plain decimal stay text, so the check names the field.
 */
export function metastableScenarioFile(form: FormValues): Record<string, unknown> {
  const ms = (text: string): number | string | undefined => {
    const v = numeric(text);
    return typeof v === 'number' ? Math.round(v * 1000) : v;
  };
  return {
    name: 'lab page',
    seeds: form.metastableSeeds,
    ratePerSecond: numeric(form.metastableRate),
    timeoutMs: ms(form.timeoutS),
    trigger: { kind: form.triggerKind, startMs: ms(form.triggerStartS), endMs: ms(form.triggerEndS), factor: numeric(form.triggerFactor) },
    policies: METASTABLE_POLICIES.filter((p) => form.metastablePolicies.includes(p.name)),
    servers: Object.fromEntries(Object.entries(METASTABLE_SERVERS).filter(([name]) => form.metastableServers.includes(name))),
  };
}

/**
 * Validates the metastable inputs through the CLI's own scenario-file check (`metastable --config`),
 * naming the input of each problem. `viaFlags` says the run is one the flags can ask for: the
 * default setup, or the default spike (`--trigger spike`). The report's table is no cross of
 * policies and servers, so no scenario file says it (`scenario` is null): it runs with those two
 * set-ups only, as `npm run lab -- metastable [--trigger spike]`.
 */
export function validateMetastableForm(form: FormValues): PageFormResult {
  const report = form.metastableTable === 'report';
  if (!report && form.metastableTable !== 'cross') return { ok: false, error: { input: 'metastableTable', message: `combinations must be "report" or "cross", got ${JSON.stringify(form.metastableTable)}` } };
  if (!report && form.metastablePolicies.length === 0) return { ok: false, error: { input: 'metastablePolicies', message: 'pick at least one client policy' } };
  if (!report && form.metastableServers.length === 0) return { ok: false, error: { input: 'metastableServers', message: 'pick at least one server' } };
  // An emptied input would take the default setup's value in a scenario file: refused instead.
  for (const [field, input] of Object.entries(METASTABLE_INPUT)) {
    if (String(form[input as keyof FormValues]).trim() === '') return { ok: false, error: { input, message: `${field} is empty` } };
  }
  // The report's table is checked as the file of all its policies and servers would be.
  const scenario = metastableScenarioFile(report ? { ...form, metastablePolicies: METASTABLE_POLICIES.map((p) => p.name), metastableServers: Object.keys(METASTABLE_SERVERS) } : form);
  try {
    const config = parseMetastableConfig(scenario, 'form');
    const seeds = config.seeds!;
    const setup = config.settings.setup;
    const combinations = report ? metastableCombinations() : config.settings.combinations;
    const perRun = setup.ratePerSecond * (setup.horizonMs / 1000) * (setup.trigger.kind === 'spike' ? setup.trigger.factor : 1);
    const work = combinations.length * seeds.length * perRun;
    if (work > PAGE_METASTABLE_MAX_REQUESTS) {
      return {
        ok: false,
        error: { input: 'metastableSeeds', message: `combinations × seeds × new requests a run is ${work.toExponential(2).replace('e+', 'e')}; keep it ≤ 2e7 in the page, or use the CLI` },
      };
    }
    const t = setup.trigger;
    const d = METASTABLE_SETUP;
    const viaFlags =
      setup.ratePerSecond === d.ratePerSecond &&
      setup.timeoutMs === d.timeoutMs &&
      t.startMs === d.trigger.startMs &&
      t.endMs === d.trigger.endMs &&
      String(t.factor) === triggerFactorDefault(t.kind);
    if (report && !viaFlags) {
      return {
        ok: false,
        error: {
          input: 'metastableTable',
          message: 'the report’s table runs with the default trigger, rate and timeout, or the default spike (as metastable [--trigger spike]); to change them, cross the policies and servers you check',
        },
      };
    }
    if (report) return { ok: true, kind: 'metastable', run: { setup, combinations, seeds }, scenario: null, viaFlags };
    const settings: MetastableSettings = viaFlags ? { setup, combinations, seeds } : { ...config.settings, seeds };
    return { ok: true, kind: 'metastable', run: settings, scenario, viaFlags };
  } catch (error) {
    if (error instanceof ConfigError) return { ok: false, error: { input: METASTABLE_INPUT[error.field] ?? (error.field === 'seeds' ? 'metastableSeeds' : 'form'), message: error.detail } };
    if (error instanceof UsageError) return { ok: false, error: { input: 'metastableSeeds', message: error.message.replace(/^form: /, '') } };
    throw error;
  }
}

/** Validates the form for its experiment. */
export function validatePage(form: FormValues): PageFormResult {
  const kind = experimentKind(form.experiment);
  if (kind === 'budget') return validateBudgetForm(form);
  if (kind === 'layers') return validateLayersForm(form);
  if (kind === 'hedging') return validateHedgingForm(form);
  if (kind === 'contention') return validateContentionForm(form);
  if (kind === 'metastable') return validateMetastableForm(form);
  const r = validateForm(form);
  return r.ok ? { ...r, kind: 'herd' } : r;
}
