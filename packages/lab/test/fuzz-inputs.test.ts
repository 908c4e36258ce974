import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import fc from 'fast-check';
import { isInvalidOptionError } from 'herdless';
import { CONTENTION_STRATEGIES, HEDGING_POLICIES, METASTABLE_POLICIES, METASTABLE_SERVERS } from 'herdless/sim';
import { afterAll, describe, expect, it } from 'vitest';
import { herdRunFromFlags } from '../src/cli/program.js';
import { MAX_SEEDS, parseSeeds } from '../src/seeds.js';
import { parseConfig } from '../src/config.js';
import { MAX_EVENTS, checkWork, estimateRunEvents } from '../src/estimate.js';
import { grpcPolicy } from '../src/experiments/budget-run.js';
import { decodeUtf8, parseJsonText } from '../src/json-file.js';
import { writeReport } from '../src/report/write.js';
import { hasControls } from '../src/text.js';
import { UsageError } from '../src/usage-error.js';
import { defaultForm, MAX_HEDGING_RUN_SECONDS, PAGE_CONTENTION_MAX_WORK, PAGE_METASTABLE_MAX_REQUESTS, validateForm, validatePage, type FormValues } from '../src/web/form.js';

/*
 * Fuzzing every lab input path: scenario files (bytes, JSON and shapes), the herd command's flags,
 * seed lists, gRPC service configs, the page's form and the report's file paths. The invariant
 * everywhere: an input is accepted, or refused with the error the CLI prints as one line with exit
 * 2 (UsageError, or the library's InvalidOptionError) — short, with no raw control character —
 * never a crash, and never more work than the bounds allow. The seed is the suite's fixed one
 * (vitest.setup.ts) and every property runs all its cases: a time limit would make a slow machine
 * test fewer inputs than a fast one (each property takes a few seconds at most on a busy 2-core one).
 */

/** The refusal contract: the kind of error main.ts prints with exit 2, one short line, controls escaped. */
function expectRefusal(error: unknown): void {
  if (!(error instanceof UsageError) && !isInvalidOptionError(error)) throw error; // a crash: fail with it
  const message = (error as Error).message;
  expect(message.length).toBeLessThan(1000);
  expect(hasControls(message)).toBe(false);
}

/** Runs `f`; an exception must be a refusal. Returns the value or undefined. */
function acceptOrRefuse<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch (error) {
    expectRefusal(error);
    return undefined;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'herdless-fuzz-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const tempFile = (content: string | Uint8Array): string => {
  const path = join(dir, `in${n++ % 16}.json`);
  writeFileSync(path, content);
  return path;
};

/** Hostile scalars: extremes, wrong types, control characters, long text. */
const hostile = fc.oneof(
  fc.constantFrom(0, -1, 0.5, Infinity, -Infinity, 1e308, 2 ** 53, Number.MAX_SAFE_INTEGER + 2, 1e-320, null, true, '', '\u001b[2J', '\u009b31m', 'a\nb', '0-19', 'x'.repeat(5000)),
  fc.integer({ min: -10, max: 100_000 }),
  fc.double(),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
);

/** A valid scenario (small), as a file holds it. */
const validScenario = () => ({
  name: 'fuzz',
  clients: 20,
  arrivals: { kind: 'together', spreadMs: 0 },
  server: { tickMs: 10, capacityPerTick: 5, crashWindowTicks: 10, crashLimit: 100, restartMs: 1000, startupMs: 1000, outages: [{ startMs: 100, endMs: 500 }] },
  horizonMs: 2000,
  seeds: '0-3',
  policies: ['full jitter', { name: 'mine', backoff: { kind: 'exponential', initialBackoffMs: 100, backoffMultiplier: 2, maxBackoffMs: 1000 }, maxAttempts: 4, budget: { kind: 'retry ratio', windowMs: 1000 } }],
});

const PATHS: (string | number)[][] = [
  ['name'], ['clients'], ['arrivals'], ['arrivals', 'kind'], ['arrivals', 'spreadMs'], ['arrivals', 'ratePerSecond'], ['server'], ['server', 'tickMs'],
  ['server', 'capacityPerTick'], ['server', 'crashWindowTicks'], ['server', 'crashLimit'], ['server', 'restartMs'], ['server', 'startupMs'], ['server', 'outages'],
  ['server', 'outages', 0], ['server', 'outages', 0, 'startMs'], ['server', 'outages', 0, 'endMs'], ['horizonMs'], ['stopWhenIdle'], ['seeds'], ['seeds', 0],
  ['policies'], ['policies', 0], ['policies', 1, 'name'], ['policies', 1, 'backoff'], ['policies', 1, 'backoff', 'kind'], ['policies', 1, 'backoff', 'maxBackoffMs'],
  ['policies', 1, 'maxAttempts'], ['policies', 1, 'budget'], ['policies', 1, 'budget', 'kind'], ['policies', 1, 'budget', 'windowMs'], ['extra'],
];

/** A valid scenario with a few fields replaced by hostile values (or by arbitrary JSON). */
const mutatedScenario = fc
  .array(fc.tuple(fc.constantFrom(...PATHS), fc.oneof(hostile, fc.jsonValue({ maxDepth: 3 }), fc.constant(undefined))), { minLength: 1, maxLength: 4 })
  .map((edits) => {
    const s = validScenario() as unknown as Record<string | number, unknown>;
    for (const [path, value] of edits) {
      let at: Record<string | number, unknown> = s;
      for (const key of path.slice(0, -1)) {
        const next = at[key];
        if (typeof next !== 'object' || next === null) break;
        at = next as Record<string | number, unknown>;
      }
      at[path[path.length - 1]!] = value;
    }
    return s;
  });

describe('fuzz: every lab input path accepts or refuses with one short line', () => {
  it('scenario objects: parseConfig, then the work estimate for what it accepts', () => {
    fc.assert(
      fc.property(fc.oneof(mutatedScenario, fc.jsonValue({ maxDepth: 4 })), (json) => {
        const config = acceptOrRefuse(() => parseConfig(json, 'fuzz'));
        if (config === undefined) return;
        for (const p of config.policies) {
          const events = estimateRunEvents(config.base, p);
          expect(Number.isFinite(events) && events >= 0).toBe(true);
        }
        acceptOrRefuse(() => checkWork(config.base, config.policies, 20, MAX_EVENTS, 'fuzz', 'raise it'));
      }),
      { numRuns: 400 },
    );
  });

  it('file bytes: encodings, nesting and JSON text', () => {
    const nested = fc.tuple(fc.integer({ min: 0, max: 200 }), fc.constantFrom('[', '{"a":', '"[', '\\"[')).map(([depth, open]) => open.repeat(depth));
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      fc.string({ unit: 'binary', maxLength: 64 }).map((s) => new TextEncoder().encode(s)),
      fc.tuple(fc.constantFrom([0xef, 0xbb, 0xbf], [0xff, 0xfe], [0xfe, 0xff], [0xff, 0xfe, 0, 0], []), fc.jsonValue({ maxDepth: 3 })).map(([bom, v]) => new Uint8Array([...bom, ...new TextEncoder().encode(JSON.stringify(v) ?? '')])),
      nested.map((s) => new TextEncoder().encode(s)),
    );
    fc.assert(
      fc.property(bytes, (b) => {
        acceptOrRefuse(() => parseJsonText(decodeUtf8(b, 'fuzz'), 'fuzz'));
      }),
      { numRuns: 500 },
    );
  });

  it('seed lists: at most MAX_SEEDS, each once, or refused', () => {
    const range = fc.tuple(fc.nat(2_000_000), fc.nat(200_000)).map(([a, d]) => `${a}-${a + d}`);
    const list = fc.oneof(fc.array(fc.oneof(range, fc.nat().map(String), fc.string({ maxLength: 6 })), { maxLength: 30 }).map((parts) => parts.join(',')), fc.string({ maxLength: 30 }));
    fc.assert(
      fc.property(list, (text) => {
        const seeds = acceptOrRefuse(() => parseSeeds(text));
        if (seeds === undefined) return;
        expect(seeds.length).toBeLessThanOrEqual(MAX_SEEDS);
        expect(new Set(seeds).size).toBe(seeds.length);
      }),
      { numRuns: 300 },
    );
  });

  it('the herd command: flags and a config file (its bytes), up to the run it would start', () => {
    const flag = fc.option(fc.oneof(hostile.map(String), fc.constantFrom('0', '0.9', '120', '0-19', '0-999', 'full jitter,immediate', 'immediate', 'mine', '1000')), { nil: undefined });
    const config = fc.option(fc.oneof(mutatedScenario.map((s) => JSON.stringify(s)), fc.string({ maxLength: 40 })), { nil: undefined });
    fc.assert(
      fc.property(flag, flag, flag, flag, flag, config, (spread, seeds, strategies, workers, maxEvents, text) => {
        const flags = { format: 'table' as const, spread, seeds, strategies, workers, maxEvents, ...(text === undefined ? {} : { config: tempFile(text) }) };
        const run = acceptOrRefuse(() => herdRunFromFlags(flags));
        if (run === undefined) return;
        expect(run.seeds.length).toBeGreaterThan(0);
        expect(run.policies.length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });

  it('gRPC service configs from files', () => {
    const config = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }),
      fc.record({
        methodConfig: fc.array(
          fc.record({ name: fc.constant([{}]), retryPolicy: fc.dictionary(fc.constantFrom('maxAttempts', 'initialBackoff', 'maxBackoff', 'backoffMultiplier', 'retryableStatusCodes'), fc.oneof(hostile, fc.constantFrom('0.1s', '1s', 4, ['UNAVAILABLE']))) }),
          { maxLength: 2 },
        ),
        retryThrottling: fc.dictionary(fc.constantFrom('maxTokens', 'tokenRatio'), hostile),
      }),
    );
    fc.assert(
      fc.property(config, (json) => {
        acceptOrRefuse(() => grpcPolicy(tempFile(JSON.stringify(json) ?? 'null')));
      }),
      { numRuns: 300 },
    );
  });

  it('the page form: every field as arbitrary text', () => {
    const text = fc.oneof(hostile.map(String), fc.string({ maxLength: 12 }));
    const form = fc.record({ strategy: fc.constantFrom('exponential', 'immediate', 'custom', 'x'), kind: fc.constantFrom('exponential', 'full jitter', 'constant', 'decorrelated jitter', 'nope'), clients: text, capacity: text, crashLimit: text, spreadMs: text, seeds: text, maxAttempts: text, param: text });
    fc.assert(
      fc.property(form, ({ param, ...f }) => {
        const values: FormValues = { ...defaultForm(), ...f, params: { initialBackoffMs: param } };
        const result = validateForm(values);
        if (!result.ok) {
          expect(result.error.message.length).toBeLessThan(1000);
          expect(hasControls(result.error.message)).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('the page’s hedging, contention and metastable forms: every input as arbitrary text, any boxes checked', () => {
    const text = fc.oneof(hostile.map(String), fc.string({ maxLength: 12 }), fc.constantFrom('0', '1', '0.5', '3', '10,90', '0-1', '57', '1000', '1e3'));
    // Each input keeps the preset's value four times in five, so that the later inputs are reached
    // (validation stops at the first problem) and some forms are accepted.
    const d = defaultForm();
    const field = (name: keyof FormValues) => fc.oneof({ weight: 1, arbitrary: text }, { weight: 4, arbitrary: fc.constant(d[name] as string) });
    const some = (names: readonly string[]) => fc.oneof({ weight: 1, arbitrary: fc.subarray([...names, 'x']) }, { weight: 3, arbitrary: fc.subarray([...names], { minLength: 1, maxLength: 3 }) });
    const form = fc.record({
      experiment: fc.constantFrom('hedging', 'contention', 'metastable'),
      hedgingPolicies: some(HEDGING_POLICIES),
      loads: field('loads'),
      hedgeAttempts: field('hedgeAttempts'),
      delayMs: field('delayMs'),
      percentile: field('percentile'),
      budgetRatio: field('budgetRatio'),
      durationS: field('durationS'),
      hedgingSeeds: field('hedgingSeeds'),
      contentionStrategies: some(CONTENTION_STRATEGIES),
      contentionClients: field('contentionClients'),
      contentionSeeds: field('contentionSeeds'),
      metastableTable: fc.constantFrom('report', 'cross', 'x'),
      metastablePolicies: some(METASTABLE_POLICIES.map((p) => p.name)),
      metastableServers: some(Object.keys(METASTABLE_SERVERS)),
      triggerKind: fc.constantFrom('capacity', 'spike', 'x'),
      triggerStartS: field('triggerStartS'),
      triggerEndS: field('triggerEndS'),
      triggerFactor: field('triggerFactor'),
      metastableRate: field('metastableRate'),
      timeoutS: field('timeoutS'),
      metastableSeeds: field('metastableSeeds'),
    });
    const inputs = new Set(Object.keys(defaultForm()));
    fc.assert(
      fc.property(form, (f) => {
        const result = validatePage({ ...defaultForm(), ...f });
        if (!result.ok) {
          // Refused beside an input of the form, in one short printable line.
          expect(inputs.has(result.error.input) || result.error.input === 'form', result.error.input).toBe(true);
          expect(result.error.message.length).toBeLessThan(1000);
          expect(hasControls(result.error.message)).toBe(false);
        } else if (result.kind === 'hedging') {
          const r = result.run;
          expect(r.loads.length * r.policies.length * r.seeds.length * (r.durationMs / 1000)).toBeLessThanOrEqual(MAX_HEDGING_RUN_SECONDS);
        } else if (result.kind === 'contention') {
          const r = result.run;
          expect(r.seeds.length * r.strategies.length * r.clients.reduce((a, n) => a + n * n, 0)).toBeLessThanOrEqual(PAGE_CONTENTION_MAX_WORK);
        } else if (result.kind === 'metastable') {
          const { setup, combinations, seeds } = result.run;
          const spike = setup.trigger.kind === 'spike' ? setup.trigger.factor : 1;
          expect(combinations.length * seeds.length * setup.ratePerSecond * (setup.horizonMs / 1000) * spike).toBeLessThanOrEqual(PAGE_METASTABLE_MAX_REQUESTS);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('report file paths: written inside the folder, or refused', () => {
    const segment = fc.oneof(fc.constantFrom('..', '.', '', 'data', 'figures', 'index.html', '.herdless-report.json', 'a\\b', '/'), fc.string({ maxLength: 8 }));
    const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/'));
    let round = 0;
    fc.assert(
      fc.property(fc.array(path, { minLength: 1, maxLength: 4 }), (paths) => {
        const out = join(dir, `report-${round++}`);
        const files = [...new Set(paths)].map((p) => ({ path: p, content: 'x' }));
        try {
          writeReport(out, files);
        } catch (error) {
          // A path the report would never make is a programming error (plain Error), named.
          if (!(error instanceof UsageError)) expect((error as Error).message).toMatch(/^report: bad file path /);
        }
        for (const f of walk(dir)) expect(relative(dir, f).split(sep)[0]!.startsWith('report-') || f.startsWith(join(dir, 'in'))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});

function walk(root: string): string[] {
  return readdirSync(root, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(root, e.name)) : [join(root, e.name)]));
}
