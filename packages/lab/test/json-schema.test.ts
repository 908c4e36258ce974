import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';

// Every JSON document the lab prints is checked against the schema the lab package ships for it.
const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const schemas = fileURLToPath(new URL('../schemas/', import.meta.url));
const ajv = new Ajv2020({ allErrors: true, strict: true });
for (const file of readdirSync(schemas)) ajv.addSchema(JSON.parse(readFileSync(schemas + file, 'utf8')), file);

const labJson = (...args: string[]): unknown => {
  const r = spawnSync(process.execPath, [main, ...args, '--format', 'json'], { encoding: 'utf8', timeout: 300_000 });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout);
};

const cases: [schema: string, args: string[]][] = [
  ['herd.schema.json', ['herd', '--seeds', '0-1', '--strategies', 'full jitter,exponential']],
  ['herd.schema.json', ['herd', '--seeds', '0', '--strategies', 'equal jitter', '--per-seed', '--spread', '0.5']],
  ['budget.schema.json', ['budget', '--seeds', '0', '--policies', 'no retry,4 attempts + gRPC throttling']],
  ['budget-trace.schema.json', ['budget', '--trace', '0', '--policies', 'no retry']],
  ['budget-trace.schema.json', ['budget', '--trace', '0', '--series', 'tokens']],
  ['budget-trace.schema.json', ['budget', '--trace', '0', '--series', 'per-second', '--policies', '4 attempts']],
  ['layers.schema.json', ['layers']],
  ['hedging.schema.json', ['hedging', '--seeds', '0', '--loads', '10,90', '--duration', '3']],
  ['hedging.schema.json', ['hedging', '--seeds', '0', '--loads', '50', '--duration', '3', '--percentile', '99.9', '--policies', 'no hedging,p99.9 delay + budget']],
  ['herd-bins.schema.json', ['herd', '--bins', '100', '--seeds', '0', '--strategies', 'full jitter', '--workers', '0']],
  ['waits.schema.json', ['waits', '--clients', '3', '--failures', '4']],
  ['fleet.schema.json', ['fleet', '--seeds', '0', '--policies', '4 attempts,4 attempts + shared gRPC throttling (batched)']],
  ['contention.schema.json', ['contention', '--seeds', '0-2', '--clients', '3,5']],
  ['metastable.schema.json', ['metastable', '--seeds', '0', '--policies', 'no retry', '--servers', 'FIFO,shedding']],
  ['metastable-trace.schema.json', ['metastable', '--trace', '0', '--policies', '3 retries', '--servers', 'drop expired']],
  ['fleet-trace.schema.json', ['fleet', '--trace', '0', '--policies', '4 attempts']],
];

describe('the lab JSON contract: schemaVersion and a JSON Schema per output', () => {
  it.each(cases)('%s holds for %j', (schema, args) => {
    const doc = labJson(...args) as Record<string, unknown>;
    expect(Object.keys(doc)[0]).toBe('schemaVersion');
    expect(doc.schemaVersion).toBe(1);
    const validate = ajv.getSchema(schema)!;
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
  });

  it('a schema rejects a document that breaks it (the check can fail)', () => {
    const validate = ajv.getSchema('layers.schema.json')!;
    expect(validate({ schemaVersion: 1, experiment: 'layers', rows: [{ policy: 'x', calls: { db: -1 } }] })).toBe(false);
    expect(validate({ experiment: 'layers', rows: [] })).toBe(false);
  });
});
