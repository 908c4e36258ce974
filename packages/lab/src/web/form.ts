import { type BackoffSpec } from 'herdless';
import { BACKOFF_KINDS, backoffFromSpec } from 'herdless/sim';
import { ARTICLE_SERVER, HERD_STRATEGIES, herdBackoff, type HerdStrategy } from 'herdless/sim';
import { parseSeeds } from '../cli/seeds.js';
import { ConfigError, parseConfig } from '../config.js';
import type { HerdRun } from '../experiments/herd.js';
import { PAGE_MAX_EVENTS, checkWork } from '../estimate.js';
import { UsageError } from '../usage-error.js';

/*
 * The lab page's form as data, and its validation: the form becomes a lab scenario file and goes
 * through the CLI's own `parseConfig` (and the library's `backoffFromSpec` inside it) and
 * `parseSeeds`, so the page accepts exactly what `npm run lab -- herd --config FILE` accepts and its
 * messages name the same fields. Pure: runs in the page and in Node tests alike.
 */

/** The experiments the page offers: presets of the form. */
export const PAGE_EXPERIMENTS = [
  { id: 'herd', title: '1,000 clients fail together', spreadMs: 0 },
  { id: 'herd-spread', title: 'the same herd, first sends spread over 0–0.9 s', spreadMs: 900 },
] as const;

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
  return { experiment: 'herd', ...strategyFields(strategy), clients: '1000', capacity: String(ARTICLE_SERVER.capacityPerTick), crashLimit: String(ARTICLE_SERVER.crashLimit), spreadMs: '0', seeds: '0-19' };
}

/** The strategy-dependent fields for one of the article's strategies: its backoff kind and options, no attempt cap. */
export function strategyFields(strategy: HerdStrategy): Pick<FormValues, 'strategy' | 'kind' | 'params' | 'maxAttempts'> {
  const { kind, ...options } = herdBackoff(strategy).toJSON() as BackoffSpec & Record<string, number>;
  return { strategy, kind, params: Object.fromEntries(Object.entries(options).map(([k, v]) => [k, String(v)])), maxAttempts: '' };
}

/** Text to a number for the scenario file; text that is not a number stays text, so the check names it. */
function numeric(text: string): number | string | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : t;
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
