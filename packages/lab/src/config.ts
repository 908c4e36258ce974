import { z } from 'zod';
import { isInvalidOptionError } from 'herdless';
import { BACKOFF_KINDS, BUDGET_KINDS, backoffFromSpec, budgetFromSpec, throttleFromSpec } from 'herdless/sim';
import { HERD_STRATEGIES, herdBackoff, type PolicySpec, type ScenarioSpec, type ServerModel } from 'herdless/sim';
import { MAX_SEEDS } from './seeds.js';
import { closestName, nearValue } from './closest.js';
import { MAX_FIRST_SENDS } from './estimate.js';
import { hasControls, quote } from './text.js';
import { UsageError } from './usage-error.js';

/*
 * The lab's scenario file: a documented JSON form of every knob the engine has. The herd presets
 * are such files with the article's values (see `herdPreset`). Validated with zod; each error
 * names the field's path and the value.
 */

const finite = z.number().refine(Number.isFinite, { message: 'must be finite' });
/** A name printed in tables and titles: no control characters or escape sequences. */
const printable = (min: number, max: number) => z.string().min(min).max(max).refine((s) => !hasControls(s), { message: 'must not contain control characters or escape sequences' });
const nonNegative = finite.min(0);

const serverSchema = z.strictObject({
  tickMs: finite.gt(0).max(60_000),
  capacityPerTick: z.number().int().min(0).max(1e7),
  crashWindowTicks: z.number().int().min(1).max(1e5),
  crashLimit: z.number().int().min(0),
  restartMs: nonNegative,
  startupMs: nonNegative,
  outages: z.array(z.strictObject({ startMs: nonNegative, endMs: nonNegative })).default([]),
});

const policyObjectSchema = z.strictObject({
  name: printable(1, 80),
  backoff: z.looseObject({ kind: z.enum(BACKOFF_KINDS) }),
  maxAttempts: z.number().int().min(1).max(1e6).nullable(),
  budget: z.looseObject({ kind: z.enum(BUDGET_KINDS) }).optional(),
  throttle: z.looseObject({ kind: z.literal('adaptive throttling') }).optional(),
});

const policySchema = z.union([z.enum(HERD_STRATEGIES), policyObjectSchema]);

const fileSchema = z.strictObject({
  name: printable(0, 200).optional(),
  clients: z.number().int().min(1).max(10_000_000),
  arrivals: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('together'), spreadMs: nonNegative }),
    z.strictObject({ kind: z.literal('poisson'), ratePerSecond: finite.gt(0).max(1e6) }),
  ]),
  server: serverSchema,
  horizonMs: finite.gt(0).max(86_400_000),
  stopWhenIdle: z.boolean().default(true),
  seeds: z.union([z.string().max(10_000), z.array(z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)).min(1).max(MAX_SEEDS)]).optional(),
  policies: z.array(policySchema).min(1).max(50),
});

/** A validated scenario file: shared settings plus one or more policies to compare. */
export interface LabConfig {
  name: string;
  base: Omit<ScenarioSpec, 'policy'>;
  policies: PolicySpec[];
  seeds?: string | number[];
}

/** The JSON spec of one of the article's herd strategies. */
export function herdPolicySpec(name: (typeof HERD_STRATEGIES)[number]): PolicySpec {
  return { name, backoff: herdBackoff(name).toJSON(), maxAttempts: null };
}

/**
 * A problem with one field of a scenario: `field` is its path (`server.capacityPerTick`,
 * `policies[0].backoff.maxBackoffMs`, or `(top level)`), `detail` the sentence that names the field
 * and the value, and the message is `where: detail`. The lab page puts `detail` beside the input.
 */
export class ConfigError extends UsageError {
  override name = 'ConfigError';
  constructor(
    readonly where: string,
    readonly field: string,
    readonly detail: string,
  ) {
    super(`${where}: ${detail}`);
  }
}

/** Fields only a herd/budget scenario has (top level, and its server's). */
const HERD_ONLY = { top: ['clients', 'arrivals', 'stopWhenIdle'], server: ['tickMs', 'capacityPerTick', 'crashWindowTicks', 'crashLimit', 'restartMs', 'startupMs', 'outages'] };
/** Fields only a metastable scenario has (top level, and its server's). */
const METASTABLE_ONLY = { top: ['ratePerSecond', 'processes', 'timeoutMs', 'trigger', 'servers'], server: ['workers', 'serviceMs', 'service', 'discipline', 'dropExpired', 'shedding'] };

/**
 * For a scenario file that is refused: ` (a … scenario: give it to …)` when it has fields only the
 * other kind of scenario file has, so that a file given to the wrong command says which command
 * takes it; '' otherwise.
 * @param expected the kind of file the command takes.
 */
export function otherScenarioHint(json: unknown, expected: 'herd' | 'metastable'): string {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return '';
  const other = expected === 'herd' ? METASTABLE_ONLY : HERD_ONLY;
  const server = (json as { server?: unknown }).server;
  const has = (o: unknown, keys: readonly string[]): boolean => typeof o === 'object' && o !== null && !Array.isArray(o) && keys.some((k) => Object.hasOwn(o, k));
  if (!has(json, other.top) && !has(server, other.server)) return '';
  return expected === 'herd'
    ? ' (a metastable scenario: give it to metastable --config)'
    : ' (a herd or budget scenario: give it to herd --config or budget --config)';
}

/**
 * Validates a parsed scenario file (see `docs/lab.md` for the format).
 * @param where prefix of error messages.
 * @throws ConfigError naming the field and the value.
 */
export function parseConfig(json: unknown, where = 'config'): LabConfig {
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = firstIssue(parsed.error.issues);
    const field = pathText(issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issueField(issue, json));
    // A metastable scenario given here: say which command takes it.
    const other = otherScenarioHint(json, 'herd');
    throw new ConfigError(where, field, issue.code === 'unrecognized_keys' ? describeIssue(issue, json, other) : `${describeIssue(issue, json)}${other}`);
  }
  const c = parsed.data;
  const server: ServerModel = c.server;
  const ticks = c.horizonMs / server.tickMs;
  if (!Number.isInteger(ticks)) {
    throw new ConfigError(where, 'horizonMs', `horizonMs must be a whole number of ticks (tickMs ${server.tickMs}), got ${c.horizonMs}`);
  }
  // A bound on the work one run may ask for: the 1,000,000-client herd (1.2 × 10^10 client-ticks).
  if (c.clients * ticks > 1.2e10) {
    throw new ConfigError(where, 'clients', `clients × horizon ticks is ${c.clients} × ${ticks}; keep it ≤ 1.2e10 (e.g. 1000000 clients for 120 s)`);
  }
  if (ticks > 10_000_000) throw new ConfigError(where, 'horizonMs', `horizonMs must be at most 10000000 ticks, got ${ticks} ticks`);
  if (Array.isArray(c.seeds)) {
    const seeds = c.seeds;
    // A seed listed twice would weigh twice in the means (`--seeds` refuses it too). One pass with
    // a Set: linear whatever the list's length.
    const seen = new Set<number>();
    const twice = seeds.find((s) => seen.size === seen.add(s).size);
    if (twice !== undefined) throw new ConfigError(where, 'seeds', `seeds must list each seed once, got ${twice} twice in ${render(seeds)}`);
  }
  if (c.arrivals.kind === 'together' && c.arrivals.spreadMs > c.horizonMs) {
    // First sends after the horizon are never made: the run would show no requests at all.
    throw new ConfigError(where, 'arrivals.spreadMs', `arrivals.spreadMs must be ≤ horizonMs (${c.horizonMs}): first sends after the horizon never happen, got ${c.arrivals.spreadMs}`);
  }
  c.server.outages.forEach((o, i) => {
    if (!(o.endMs > o.startMs)) {
      throw new ConfigError(where, `server.outages[${i}].endMs`, `server.outages[${i}].endMs must be > startMs (${o.startMs}), got ${o.endMs}`);
    }
  });
  if (c.arrivals.kind === 'poisson') {
    // Every first send is queued before the run starts: their number bounds a run's memory.
    const expected = c.clients * c.arrivals.ratePerSecond * (c.horizonMs / 1000);
    if (expected > MAX_FIRST_SENDS) {
      throw new ConfigError(where, 'arrivals.ratePerSecond', `arrivals.ratePerSecond × clients × horizon is about ${Math.round(expected)} requests; keep it ≤ ${MAX_FIRST_SENDS}`);
    }
  }
  const names = new Set<string>();
  const policies = c.policies.map((p, i): PolicySpec => {
    const spec: PolicySpec =
      typeof p === 'string'
        ? herdPolicySpec(p)
        : { name: p.name, backoff: p.backoff as PolicySpec['backoff'], maxAttempts: p.maxAttempts, ...(p.budget ? { budget: p.budget as NonNullable<PolicySpec['budget']> } : {}),
            ...(p.throttle ? { throttle: p.throttle as NonNullable<PolicySpec['throttle']> } : {}),
          };
    if (names.has(spec.name)) throw new ConfigError(where, `policies[${i}].name`, `policies[${i}].name ${render(spec.name)} is used twice`);
    names.add(spec.name);
    try {
      backoffFromSpec(spec.backoff, `policies[${i}].backoff`);
      if (spec.budget) budgetFromSpec(spec.budget, `policies[${i}].budget`);
      if (spec.throttle) throttleFromSpec(spec.throttle, `policies[${i}].throttle`);
    } catch (error) {
      if (isInvalidOptionError(error)) throw new ConfigError(where, error.field, `${error.field} ${error.requirement}, got ${render(error.value)}`);
      throw error;
    }
    return spec;
  });
  return {
    name: c.name ?? 'scenario',
    base: { clients: c.clients, arrivals: c.arrivals, server, horizonMs: c.horizonMs, stopWhenIdle: c.stopWhenIdle },
    policies,
    ...(c.seeds === undefined ? {} : { seeds: c.seeds }),
  };
}

/**
 * The path of the field an issue is about. A policy that is an object but fails the union of
 * "strategy name or object" is about the field inside it that is wrong (`policies[0].maxAttempts`),
 * as its message says, not the whole policy.
 */
function issueField(issue: z.core.$ZodIssue, root: unknown): readonly PropertyKey[] {
  if (issue.code !== 'invalid_union' || !/policies\[\d+\]$/.test(pathText(issue.path))) return issue.path;
  const value = valueAt(root, issue.path);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return issue.path;
  const inner = policyObjectSchema.safeParse(value);
  if (inner.success) return issue.path;
  const first = firstIssue(inner.error.issues);
  return [...issue.path, ...(first.code === 'unrecognized_keys' ? [...first.path, first.keys[0]!] : first.path)];
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
 * The problem to report: a key the schema does not know before anything else, since a misspelt key
 * also makes the field it misspells missing (`{"clientz": 10}`: the problem is `clientz`, not that
 * `clients` is missing).
 */
export function firstIssue(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue {
  return issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0]!;
}

/** The schema beneath optional, default and nullable wrappers. */
function unwrap(schema: z.core.$ZodType): z.core.$ZodType {
  const def = schema._zod.def as { type: string; innerType?: z.core.$ZodType };
  return (def.type === 'optional' || def.type === 'default' || def.type === 'nullable') && def.innerType ? unwrap(def.innerType) : schema;
}

/** The object schemas a value at `schema` may be (a union's object options, or the object itself). */
function objectsOf(schema: z.core.$ZodType): z.core.$ZodObject[] {
  const s = unwrap(schema);
  const def = s._zod.def as { type: string; options?: z.core.$ZodType[] };
  if (def.type === 'object') return [s as z.core.$ZodObject];
  if (def.type === 'union') return def.options!.flatMap(objectsOf);
  return [];
}

/**
 * The field names `root` (by default the scenario schema) allows in the object at `path`, for a
 * misspelt key's hint; a record's keys are the file's own names, so any key leads to its values.
 */
export function knownFields(path: readonly PropertyKey[], root: z.core.$ZodType = fileSchema): string[] {
  let schemas: z.core.$ZodType[] = [root];
  for (const key of path) {
    schemas = schemas.flatMap((schema): z.core.$ZodType[] => {
      const s = unwrap(schema);
      const def = s._zod.def as { type: string; element?: z.core.$ZodType; options?: z.core.$ZodType[] };
      if (typeof key === 'number') {
        if (def.type === 'array') return [def.element!];
        return [];
      }
      if (def.type === 'record') return [(def as { valueType?: z.core.$ZodType }).valueType!];
      return objectsOf(s).flatMap((o) => (key in o._zod.def.shape ? [o._zod.def.shape[key as string]!] : []));
    });
  }
  return [...new Set(schemas.flatMap(objectsOf).flatMap((o) => Object.keys(o._zod.def.shape)))];
}

/** A value in a message: short, escaped, and bounded in work whatever its size or depth. */
const render = (value: unknown): string => quote(value);


function pathText(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('') || '(top level)';
}

/** @param other {@link otherScenarioHint}'s hint, which replaces the list of known fields. */
function describeIssue(issue: z.core.$ZodIssue, root: unknown, other = ''): string {
  const path = pathText(issue.path);
  const value = valueAt(root, issue.path);
  switch (issue.code) {
    case 'invalid_type':
      if (value === undefined) return `${path} is missing (expected ${issue.expected})`;
      if (typeof value === 'number' && (value === Infinity || value === -Infinity)) {
        // JSON.parse reads a number beyond the doubles' range (1e400) as ±Infinity.
        return `${path} must be a finite number, got ${value} (a number too large for a double, such as 1e400, reads as Infinity)`;
      }
      return `${path} must be ${issue.expected === 'int' ? 'an integer' : `${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`}, got ${render(value)}`;
    case 'too_small':
      return `${path} must be ${issue.inclusive ? '≥' : '>'} ${String(issue.minimum)}${issue.origin === 'array' ? ' entries' : issue.origin === 'string' ? ' characters' : ''}, got ${render(value)}`;
    case 'too_big':
      return `${path} must be ${issue.inclusive ? '≤' : '<'} ${String(issue.maximum)}${issue.origin === 'array' ? ' entries' : issue.origin === 'string' ? ' characters' : ''}, got ${render(value)}`;
    case 'unrecognized_keys': {
      const key = issue.keys[0]!;
      const fields = knownFields(issue.path);
      const near = closestName(key, fields);
      const hint = near !== undefined ? ` (did you mean ${near}?)` : ` (the fields here: ${fields.join(', ')})`;
      return `${path === '(top level)' ? '' : `${path}.`}${key} is not a known field${other === '' ? hint : other}`;
    }
    case 'invalid_value':
      return `${path} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${render(value)}${nearValue(value, issue.values)}`;
    case 'invalid_union':
      if (path === 'seeds') {
        if (Array.isArray(value) && value.length > MAX_SEEDS) return `seeds must list at most ${MAX_SEEDS} seeds (each is a run per policy), got ${value.length}`;
        if (typeof value === 'string') return `seeds must be at most 10000 characters, got ${value.length}`;
        return `seeds must be text such as "0-19" or a non-empty array of integers ≥ 0, got ${render(value)}`;
      }
      if (issue.path[issue.path.length - 1] === 'kind' && issue.path[0] === 'arrivals') {
        return `${path} must be "together" or "poisson", got ${render(value)}${nearValue(value, ['together', 'poisson'])}`;
      }
      if (issue.path.length && /policies\[\d+\]$/.test(path)) {
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
          // An object policy: report what is wrong inside it, not that the union failed.
          const inner = policyObjectSchema.safeParse(value);
          if (!inner.success) {
            const first = firstIssue(inner.error.issues);
            return describeIssue({ ...first, path: [...issue.path, ...first.path] } as z.core.$ZodIssue, root);
          }
        }
        return `${path} must be a herd strategy name (${HERD_STRATEGIES.join(', ')}) or {name, backoff, maxAttempts}, got ${render(value)}${nearValue(value, HERD_STRATEGIES)}`;
      }
      return `${path} ${issue.message}, got ${render(value)}`;
    default:
      return `${path} ${issue.message}, got ${render(value)}`;
  }
}
