import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const lab = (...args: string[]) => spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 300_000 });

describe('herdless-lab fleet', () => {
  it('prints the table: per-process budgets barely cut the load, a shared one holds it near 1×', () => {
    const r = lab('fleet', '--seeds', '0-2');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(
      '# fleet: 200 processes alive at once, each replaced after 2 s, about 300 new requests/s in all, the downstream down from 5 s to 15 s, seeds 0-2',
    );
    const load = (policy: string): number => Number(lines.find((l) => l.startsWith(`${policy}  `))!.slice(policy.length).trim().split('x')[0]);
    expect(load('4 attempts')).toBeGreaterThan(3.8);
    expect(load('4 attempts + gRPC throttling per process')).toBeGreaterThan(2);
    expect(load('4 attempts + 10% retry ratio per process')).toBeGreaterThan(1.4);
    expect(load('4 attempts + shared gRPC throttling')).toBeLessThanOrEqual(1.1);
    expect(load('4 attempts + shared 10% retry ratio')).toBeLessThanOrEqual(1.12);
  });

  it('--format json follows the contract; long-lived processes give the budget experiment back', () => {
    const r = lab('fleet', '--format', 'json', '--seeds', '0-1', '--processes', '10', '--lifetime', '40', '--policies', '4 attempts + gRPC throttling per process,4 attempts + shared gRPC throttling');
    expect(r.status).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(Object.keys(json)).toEqual(['schemaVersion', 'experiment', 'seeds', 'processes', 'lifetimeMs', 'flushIntervalMs', 'rows']);
    expect(json).toMatchObject({ experiment: 'fleet', seeds: [0, 1], processes: 10, lifetimeMs: 40_000, flushIntervalMs: 100 });
    expect(Object.keys(json.rows[0])).toEqual(['policy', 'load', 'crashesAfter', 'backToNormal', 'retryShare']);
    // Ten processes living the whole run are the budget experiment's ten clients: about 1.01×.
    expect(json.rows[0].load.mean).toBeGreaterThan(1);
    expect(json.rows[0].load.mean).toBeLessThan(1.03);
  });

  it('--flush-interval sets the batched rows\' lag; a 1 s lag still holds the shared bucket at 1×', () => {
    const r = lab('fleet', '--format', 'json', '--seeds', '0', '--flush-interval', '1000', '--policies', '4 attempts + shared gRPC throttling (batched)');
    expect(r.status).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.flushIntervalMs).toBe(1000);
    expect(json.rows[0].load.mean).toBeLessThanOrEqual(1.01);
  });

  it('--trace prints one seed’s per-second traffic, CSV by default', () => {
    const csv = lab('fleet', '--trace', '0', '--policies', '4 attempts').stdout.trim().split('\n');
    expect(csv[0]).toBe('policy,second,new,arrivals,successes,retries');
    expect(csv).toHaveLength(41);
    const json = JSON.parse(lab('fleet', '--trace', '0', '--policies', '4 attempts', '--format', 'json').stdout);
    expect(json).toMatchObject({ experiment: 'fleet-trace', seed: 0, processes: 200, lifetimeMs: 2000, flushIntervalMs: 100 });
    expect(json.perSecond[0].arrivals).toHaveLength(40);
     // --seeds naming the traced seed asks for nothing else: the same trace.
    expect(lab('fleet', '--trace', '0', '--seeds', '0', '--policies', '4 attempts').stdout.trim().split('\n')).toEqual(csv);
  });

  it.each([
    [['fleet', '--policies', 'lots'], '--policies "lots": unknown policy "lots"'],
    [['fleet', '--processes', '0'], '--processes "0": expected an integer from 1 to 100000'],
    [['fleet', '--lifetime', 'x'], '--lifetime "x": expected a number from 0.01 to 3600'],
    [['fleet', '--flush-interval', '-5'], '--flush-interval "-5": expected a number from 0 to 60000'],
    [['fleet', '--trace', '0-3'], '--trace "0-3": give one seed'],
    [['fleet', '--trace', 'x'], '--trace "x": expected one seed, an integer from 0 to 9007199254740991'],
    [['fleet', '--trace', '-1'], '--trace "-1": expected one seed, an integer from 0 to 9007199254740991'],
    [['fleet', '--trace', '0', '--seeds', '3'], '--seeds "3": --trace "0" traces seed 0 alone (a trace is one seed\'s series): drop --seeds to trace seed 0, or give --trace 3 to trace seed 3'],
    [['fleet', '--trace', '0', '--seeds', '0-2'], '--seeds "0-2": --trace "0" traces seed 0 alone (a trace is one seed\'s series): drop --seeds to trace seed 0, or drop --trace to run seeds 0-2'],
    [['fleet', '--trace', '0', '--format', 'table'], '--trace "0" prints CSV or JSON: --format table has no trace form'],
  ])('%j: exit 2 with a message naming the flag', (args, message) => {
    const r = lab(...args);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(message);
  });
});
