import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './temp.js';
import { describe, expect, it } from 'vitest';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const lab = (...args: string[]) => spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 300_000 });

/** Writes a scenario file of the article's budget set-up (10 clients, the downstream down 5–15 s) with `fields` over it. */
const outageFile = (name: string, fields: Record<string, unknown>): string => {
  const file = join(tempDir('herdless-'), name);
  const server = { tickMs: 10, capacityPerTick: 5, crashWindowTicks: 10, crashLimit: 100, restartMs: 1000, startupMs: 0, outages: [{ startMs: 5000, endMs: 15_000 }] };
  writeFileSync(file, JSON.stringify({ clients: 10, arrivals: { kind: 'poisson', ratePerSecond: 30 }, server, horizonMs: 40_000, stopWhenIdle: false, ...fields }));
  return file;
};

describe('herdless-lab budget', () => {
  it('--format json follows the contract', () => {
    const r = lab('budget', '--format', 'json', '--policies', '4 attempts,4 attempts + gRPC throttling');
    expect(r.status).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(Object.keys(json)).toEqual(['schemaVersion', 'experiment', 'seeds', 'rows']);
    expect(json.experiment).toBe('budget');
    expect(json.seeds).toHaveLength(20);
    expect(json.rows.map((row: { policy: string }) => row.policy)).toEqual(['4 attempts', '4 attempts + gRPC throttling']);
    expect(Object.keys(json.rows[0])).toEqual(['policy', 'load', 'crashesAfter', 'backToNormal', 'retryShare']);
    expect(json.rows[0].crashesAfter).toEqual({ mean: 25, min: 25, max: 25 });
    expect(json.rows[0].backToNormal).toEqual({ mean: 40, min: 40, max: 40 });
    expect(json.rows[0].load.mean).toBeGreaterThan(3.86);
    expect(json.rows[1].load.mean).toBeLessThan(1.02);
  });

  it('prints the table with every policy', () => {
    const r = lab('budget', '--seeds', '0-2');
    expect(r.status).toBe(0);
    for (const p of ['no retry', '4 attempts + gRPC throttling', '4 attempts + 10% retry ratio (at decision)', '4 attempts + AWS retry quota']) {
      expect(r.stdout).toContain(`\n${p} `);
    }
    expect(r.stdout).toMatch(/\n4 attempts {2,}3\.8\dx \(3\.8\d-3\.8\d\) +25\.0 +40\.0 s \(40-40\)/);
  });

  it('simulates a gRPC service config (the article’s retryPolicy + retryThrottling)', () => {
    const dir = tempDir('herdless-');
    const file = join(dir, 'service-config.json');
    writeFileSync(
      file,
      JSON.stringify({
        methodConfig: [
          { name: [{ service: 'shop.Cart' }], retryPolicy: { maxAttempts: 4, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] } },
        ],
        retryThrottling: { maxTokens: 10, tokenRatio: 0.1 },
      }),
    );
    const r = lab('budget', '--grpc-service-config', file, '--policies', '4 attempts + gRPC throttling', '--format', 'json');
    expect(r.status).toBe(0);
    const [article, ours] = JSON.parse(r.stdout).rows;
    expect(ours.policy).toBe('gRPC service config');
    // The same policy as the article's throttled row, so the same numbers.
    expect(ours.load).toEqual(article.load);
    expect(ours.retryShare).toEqual(article.retryShare);
  });

  it('a service config whose codes leave out UNAVAILABLE retries nothing here, and says so', () => {
    const dir = tempDir('herdless-');
    const file = join(dir, 'internal.json');
    writeFileSync(file, JSON.stringify({ retryPolicy: { maxAttempts: 9, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['INTERNAL'] } }));
    const r = lab('budget', '--grpc-service-config', file, '--format', 'json', '--seeds', '0-1');
    expect(r.status).toBe(0);
    const rows = JSON.parse(r.stdout).rows;
    // The default rows stay; the config's row is added.
    expect(rows.map((row: { policy: string }) => row.policy)).toHaveLength(10);
    expect(rows[9].retryShare).toEqual({ mean: 0, min: 0, max: 0 });
    expect(r.stderr).toContain('warning: --grpc-service-config');
    expect(r.stderr).toContain('maxAttempts: 9 is treated as 5');
    expect(r.stderr).toContain('leave out UNAVAILABLE');
  });

  it('--trace --format json prints the same data as JSON', () => {
    const json = JSON.parse(lab('budget', '--trace', '0', '--format', 'json').stdout);
    expect(json.experiment).toBe('budget-trace');
    expect(json.tokens).toHaveLength(4000);
    expect(json.tokens[0]).toEqual({ tick: 0, timeS: 0, tokens: 10 });
    expect(json.perSecond[0].policy).toBe('no retry');
  });

  it('--trace honours --policies: only those, in the order given, with the same numbers as the full trace', () => {
    const json = JSON.parse(lab('budget', '--trace', '0', '--policies', '4 attempts,no retry', '--format', 'json').stdout);
    expect(json.tokens).toHaveLength(4000);
    expect(json.perSecond.map((p: { policy: string }) => p.policy)).toEqual(['4 attempts', 'no retry']);
    // Seed 0: 317, 286, 310 new requests in the first seconds; in seconds 5–7 (the outage) 871, 1218, 1169
    // arrivals with 4 attempts (583, 891, 891 of them retries), 288, 327, 278 with no retry.
    expect(json.perSecond[0].fresh.slice(0, 3)).toEqual([317, 286, 310]);
    expect(json.perSecond[0].arrivals.slice(5, 8)).toEqual([871, 1218, 1169]);
    expect(json.perSecond[0].retries.slice(5, 8)).toEqual([583, 891, 891]);
    expect(json.perSecond[1].arrivals.slice(5, 8)).toEqual([288, 327, 278]);
    const csv = lab('budget', '--trace', '0', '--policies', 'no retry').stdout.trim().split('\n\n')[1]!.split('\n');
    expect(csv).toHaveLength(41);
    expect(csv[6]).toBe('"no retry",5,288,288,0,0');
  });

  it('--trace prints the tokens and per-second series', () => {
    const r = lab('budget', '--trace', '0');
    expect(r.status).toBe(0);
    const [tokens, perSecond] = r.stdout.trim().split('\n\n');
    expect(tokens!.split('\n')).toHaveLength(4001);
    expect(tokens!.split('\n')[1]).toMatch(/^0,0\.00,\d/);
    expect(perSecond!.split('\n')[0]).toBe('policy,second,new,arrivals,successes,retries');
     // --seeds naming the traced seed asks for nothing else: the same trace.
    expect(lab('budget', '--trace', '0', '--seeds', '0').stdout).toBe(r.stdout);
  });

  it.each([
    [['budget', '--policies', 'lots'], '--policies "lots": unknown policy "lots"'],
    [['budget', '--grpc-service-config', '/nope.json'], '--grpc-service-config "/nope.json": no such file'],
    [['budget', '--trace', '0-3'], '--trace "0-3": give one seed'],
    [['budget', '--trace', 'x'], '--trace "x": expected one seed, an integer from 0 to 9007199254740991'],
    [['budget', '--trace', '-1'], '--trace "-1": expected one seed, an integer from 0 to 9007199254740991'],
    [['budget', '--trace', '0', '--seeds', '3'], '--seeds "3": --trace "0" traces seed 0 alone (a trace is one seed\'s series): drop --seeds to trace seed 0, or give --trace 3 to trace seed 3'],
    [['budget', '--trace', '0', '--seeds', '0-2'], '--seeds "0-2": --trace "0" traces seed 0 alone (a trace is one seed\'s series): drop --seeds to trace seed 0, or drop --trace to run seeds 0-2'],
    [['budget', '--trace', '0', '--format', 'table'], '--trace "0" prints CSV or JSON: --format table has no trace form'],
    [['budget', '--trace', '0', '--grpc-service-config', 'x.json'], '--trace "0" traces the article\'s policies: it cannot be combined with --grpc-service-config'],
    [['budget', '--trace', '0', '--policies', 'lots'], '--policies "lots": unknown policy "lots"'],
    [['budget', '--seeds', 'x'], '--seeds "x"'],
    [['budget', '--series', 'tokens'], '--series "tokens" picks a block of --trace: give --trace SEED too'],
    [['budget', '--trace', '0', '--series', 'tokens,per-second'], '--series "tokens,per-second": give one of tokens, per-second'],
    [['budget', '--trace', '0', '--series', 'lots'], '--series "lots": unknown series "lots"'],
    [['budget', '--trace', '0', '--series', 'tokens', '--policies', 'no retry'], '--series tokens traces gRPC throttling only'],
  ])('%j exits 2 with one line', (args, message) => {
    const r = lab(...args);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(message);
  });

  it('--config runs a scenario file’s own policies, budgets included', () => {
    const policy = { name: '4 attempts + throttling', backoff: { kind: 'proportional jitter', initialBackoffMs: 100, backoffMultiplier: 2, maxBackoffMs: 1000, jitter: 0.2 }, maxAttempts: 4 };
    const file = outageFile('outage.json', { policies: [{ ...policy, budget: { kind: 'retry throttling', maxTokens: 10, tokenRatio: 0.1 } }] });
    const r = lab('budget', '--config', file, '--format', 'json');
    expect(r.status).toBe(0);
    const [row] = JSON.parse(r.stdout).rows;
    // The same scenario and policy as the article's throttled row: the same numbers.
    const article = JSON.parse(lab('budget', '--policies', '4 attempts + gRPC throttling', '--format', 'json').stdout).rows[0];
    expect(row.load).toEqual(article.load);
    expect(row.backToNormal).toEqual({ mean: 15, min: 15, max: 15 });
  });

  it('a load of 10x or more widens the load column instead of pushing the row out of line', () => {
    const immediate = { backoff: { kind: 'constant', delayMs: 0 } };
    const file = outageFile('nocap.json', {
      seeds: [0, 1],
      policies: [
        { name: 'once', ...immediate, maxAttempts: 1 },
        { name: 'twenty', ...immediate, maxAttempts: 20 },
      ],
    });
    const r = lab('budget', '--config', file);
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n').filter((line) => !line.startsWith('#'));
    const wide = lines.find((line) => line.startsWith('twenty'))!;
    expect(wide).toMatch(/^twenty {3}\d{2}\.\d{2}x \(/);
    // Every row's next column starts where the header's does.
    const column = lines[0]!.indexOf('crashes after');
    for (const line of lines.slice(1)) expect(line.slice(column - 3, column)).toBe('   ');
  });

  it.each<[string, unknown, string]>([
    [
      'a lab scenario',
      { clients: 10, arrivals: { kind: 'poisson', ratePerSecond: 30 }, server: {}, horizonMs: 40_000, policies: ['4 attempts'] },
      'found "clients", "arrivals", "server", "horizonMs", "policies" (a lab scenario: give it to --config)',
    ],
    ['an empty object', {}, 'found an empty object'],
    ['misspelt keys only', { methodConfigs: [], retryThrotling: { maxTokens: 10, tokenRatio: 0.1 } }, 'found "methodConfigs", "retryThrotling" ("methodConfigs": did you mean methodConfig?)'],
  ])('a file with none of the service config keys is refused: %s', (_name, json, message) => {
    const file = join(tempDir('herdless-'), 'scenario.json');
    writeFileSync(file, JSON.stringify(json));
    const r = lab('budget', '--grpc-service-config', file, '--seeds', '0');
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    const expected = "not a gRPC service config: expected methodConfig, retryPolicy, retryThrottling or a bare retry policy's fields (maxAttempts, …) at the top level";
    expect(r.stderr.trim()).toBe(`herdless-lab: --grpc-service-config ${JSON.stringify(file)}: ${expected}, ${message}`);
  });

  it('an invalid service config names the JSON path', () => {
    const dir = tempDir('herdless-');
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ retryPolicy: { maxAttempts: 1, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] } }));
    const r = lab('budget', '--grpc-service-config', file);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('retryPolicy.maxAttempts');
  });
});

describe('herdless-lab layers', () => {
  it('--format json prints exactly the contract', () => {
    const r = lab('layers', '--format', 'json');
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(
      '{"schemaVersion":1,"experiment":"layers","rows":[{"policy":"every layer retries","calls":{"frontend":3,"backend":9,"db":27}},{"policy":"retry at one layer","calls":{"frontend":3,"backend":3,"db":3}}]}',
    );
  });

  it('--depth and --attempts generalise; the table lists each service', () => {
    const r = lab('layers', '--depth', '4', '--attempts', '2');
    expect(r.stdout).toContain('every layer retries          2           4           8   16');
    expect(r.stdout).toContain('retry at one layer           2           2           2    2');
  });

  it.each([
    [['layers', '--depth', '0'], '--depth "0": expected an integer from 1 to 10'],
    [['layers', '--attempts', '10', '--depth', '10'], '10^10 calls is more than 100000'],
  ])('%j exits 2', (args, message) => {
    const r = lab(...args);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(message);
  });
});
