import { z } from 'zod';
import { isInvalidOptionError } from 'herdless';
import { BACKOFF_KINDS, BUDGET_KINDS, METASTABLE_POLICIES, backoffFromSpec, budgetFromSpec, metastableSetup, throttleFromSpec, type MetastableCombination, type MetastableServer, type PolicySpec } from 'herdless/sim';
import { MAX_SEEDS, parseSeeds } from './seeds.js';
import { closestName, nearValue } from './closest.js';
import { ConfigError, firstIssue, knownFields, otherScenarioHint } from './config.js';
import { hasControls, quote } from './text.js';
import type { MetastableSettings } from './experiments/metastable.js';

/*
 * The metastable experiment's scenario file: every knob of the model, each optional (the default
 * setup fills the rest), the client policies and the server variants to cross. See docs/lab.md.
 * Pure (no file system): the lab page checks its metastable form with it; `metastable-config-file.ts`
 * reads a file for the CLI.
 */

const finite = z.number().refine(Number.isFinite, { message: 'must be finite' });
const printable = (min: number, max: number) => z.string().min(min).max(max).refine((s) => !hasControls(s), { message: 'must not contain control characters or escape sequences' });

const serverSchema = z.strictObject({
  workers: z.number().int().optional(),
  serviceMs: finite.optional(),
  service: z.enum(['exponential', 'constant']).optional(),
  discipline: z.enum(['fifo', 'lifo']).optional(),
  dropExpired: z.boolean().optional(),
  shedding: z.boolean().optional(),
});

const fileSchema = z.strictObject({
  name: printable(0, 200).optional(),
  seeds: z.union([z.string().max(10_000), z.array(z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)).min(1).max(MAX_SEEDS)]).optional(),
  ratePerSecond: finite.optional(),
  processes: z.number().int().optional(),
  timeoutMs: finite.optional(),
  horizonMs: finite.optional(),
  server: serverSchema.optional(),
  trigger: z.strictObject({ kind: z.enum(['capacity', 'spike']).optional(), startMs: finite.optional(), endMs: finite.optional(), factor: finite.optional() }).optional(),
  policies: z
    .array(
      z.strictObject({
        name: printable(1, 80),
        backoff: z.looseObject({ kind: z.enum(BACKOFF_KINDS) }),
        maxAttempts: z.number().int().min(1).max(1000),
        budget: z.looseObject({ kind: z.enum(BUDGET_KINDS) }).optional(),
        throttle: z.looseObject({ kind: z.literal('adaptive throttling') }).optional(),
      }),
    )
    .min(1)
    .max(50)
    .optional(),
  servers: z.record(printable(1, 80), serverSchema).optional(),
});

/** A file's settings, and the seeds it names (if any). */
export interface MetastableConfig {
  settings: Omit<MetastableSettings, 'seeds'>;
  seeds?: number[];
}

function pathText(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('') || '(top level)';
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = root;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/**
 * Validates a parsed metastable scenario file.
 * @param where prefix of error messages.
 * @throws ConfigError naming the field and the value.
 */
export function parseMetastableConfig(json: unknown, where = 'config'): MetastableConfig {
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = firstIssue(parsed.error.issues);
    // A herd or budget scenario given here: say which command takes it, rather than a "did you mean".
    const other = otherScenarioHint(json, 'metastable');
    if (issue.code === 'unrecognized_keys') {
      const field = pathText([...issue.path, issue.keys[0]!]);
      const near = closestName(issue.keys[0]!, knownFields(issue.path, fileSchema));
      throw new ConfigError(where, field, `${field} is not a known field${other !== '' ? other : near === undefined ? '' : ` (did you mean ${near}?)`}`);
    }
    const field = pathText(issue.path);
    const value = valueAt(json, issue.path);
    const detail =
      value === undefined
        ? `${field} is missing`
        : issue.code === 'invalid_value'
          ? `${field} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${quote(value)}${nearValue(value, issue.values)}`
          : issue.code === 'invalid_type'
            ? `${field} must be ${issue.expected === 'int' ? 'an integer' : `${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`}, got ${quote(value)}`
            : `${field} ${issue.message.replace(/^Too (small|big): expected \w+ to (have )?/, 'must be ')}, got ${quote(value)}`;
    throw new ConfigError(where, field, `${detail}${other}`);
  }
  const c = parsed.data;
  const fromLibrary = <T>(fn: () => T, prefix = ''): T => {
    try {
      return fn();
    } catch (error) {
      if (isInvalidOptionError(error)) {
        const field = `${prefix}${error.field}`;
        throw new ConfigError(where, field, `${field} ${error.requirement}, got ${quote(error.value)}`);
      }
      throw error;
    }
  };
  const { name: _name, seeds: _seeds, policies: filePolicies, servers: fileServers, ...options } = c;
  const setup = fromLibrary(() => metastableSetup(options));
  const names = new Set<string>();
  const policies: PolicySpec[] =
    filePolicies?.map((p, i) => {
      if (names.has(p.name)) throw new ConfigError(where, `policies[${i}].name`, `policies[${i}].name ${quote(p.name)} is used twice`);
      names.add(p.name);
      const spec = { name: p.name, backoff: p.backoff, maxAttempts: p.maxAttempts, ...(p.budget ? { budget: p.budget } : {}), ...(p.throttle ? { throttle: p.throttle } : {}) } as PolicySpec;
      fromLibrary(() => backoffFromSpec(spec.backoff, `policies[${i}].backoff`));
      if (spec.budget) fromLibrary(() => budgetFromSpec(spec.budget, `policies[${i}].budget`));
      if (spec.throttle) fromLibrary(() => throttleFromSpec(spec.throttle, `policies[${i}].throttle`));
      return spec;
    }) ?? [...METASTABLE_POLICIES];
  const servers = Object.entries(fileServers ?? { server: {} }) as [string, Partial<MetastableServer>][];
  if (servers.length === 0) throw new ConfigError(where, 'servers', 'servers must name at least one server variant, got {}');
  for (const [name, overrides] of servers) fromLibrary(() => metastableSetup({ ...options, server: { ...options.server, ...overrides } }), `servers.${name}: `);
  const combinations: MetastableCombination[] = servers.flatMap(([server, overrides]) => policies.map((policy) => ({ policy, server, overrides })));
  let seeds: number[] | undefined;
  if (typeof c.seeds === 'string') seeds = parseSeeds(c.seeds, `${where}: seeds`);
  else if (c.seeds !== undefined) {
    if (new Set(c.seeds).size !== c.seeds.length) throw new ConfigError(where, 'seeds', `seeds must list each seed once, got ${quote(c.seeds)}`);
    seeds = c.seeds;
  }
  return { settings: { name: c.name ?? 'scenario', setup, combinations }, ...(seeds === undefined ? {} : { seeds }) };
}
