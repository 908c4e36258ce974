import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseMetastableConfig } from '../src/metastable-config.js';
import { tempDir } from './temp.js';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const lab = (...args: string[]) => {
  const r = spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

describe('herdless-lab metastable', () => {
  it('the default table, seeds 0–19: plain retries stay down, a budget or dropping expired requests recover; the output defines both words', () => {
    const r = lab('metastable');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toContain('# metastable: 200 new requests/s (Poisson) from 10 client processes to 50 workers');
    expect(lines[0]).toContain('trigger: the server at 0.5× speed 10–15 s; 60 s runs, seeds 0-19');
    expect(lines[1]).toMatch(/^# recovered: after the trigger ends, goodput .* ≥ 90% of the new requests in 3 seconds in a row/);
    expect(lines[2]).toMatch(/^# metastable: not recovered by the end of the run, though the trigger is gone/);
    const row = (policy: string, server: string) => lines.find((l) => l.startsWith(policy.padEnd(27)) && l.includes(` ${server} `))!;
    expect(row('3 retries', 'FIFO')).toMatch(/ 0\/20 {3}never \(metastable\) +0% {5}4\.00x/);
    expect(row('3 retries + jitter', 'FIFO')).toContain('0/20   never (metastable)');
    expect(row('3 retries + gRPC throttling', 'FIFO')).toContain('20/20');
    expect(row('3 retries', 'drop expired')).toContain('20/20');
    // Finagle's floor of 10 retries a second per process is 100 a second from 10 processes: more than the spare capacity.
    expect(row('3 retries + Finagle budget', 'FIFO')).toContain('0/20   never (metastable)');
    expect(row('3 retries + AWS retry quota', 'FIFO')).toContain('20/20');
    expect(lines).toHaveLength(15);
  });

  it('--policies × --servers, --trigger spike, --format csv', () => {
    const r = lab('metastable', '--seeds', '0-1', '--policies', 'no retry,3 retries', '--servers', 'LIFO,shedding', '--trigger', 'spike', '--format', 'csv');
    expect(r.status).toBe(0);
    const rows = r.stdout.trimEnd().split('\n');
    expect(rows[0]).toBe(
      'policy,server,recovered,runs,recovery_s_mean,recovery_s_min,recovery_s_max,goodput_share_mean,goodput_share_min,goodput_share_max,offered_ratio_mean,wasted_per_s_mean,peak_queue_mean,peak_queue_max',
    );
    expect(rows.slice(1).map((l) => l.split(',').slice(0, 4).join(','))).toEqual(['no retry,LIFO,2,2', '3 retries,LIFO,2,2', 'no retry,shedding,2,2', '3 retries,shedding,2,2']);
    const table = lab('metastable', '--seeds', '0', '--policies', 'no retry', '--trigger', 'spike');
    expect(table.stdout).toContain('trigger: new requests at 2× the rate 10–15 s');
  });

  it('reads names in any letter case (--servers lifo is LIFO) and prints them as the lab spells them', () => {
    const typed = lab('metastable', '--seeds', '0', '--policies', 'No Retry', '--servers', 'lifo', '--trigger', 'SPIKE', '--format', 'csv');
    expect(typed.status).toBe(0);
    expect(typed.stdout).toBe(lab('metastable', '--seeds', '0', '--policies', 'no retry', '--servers', 'LIFO', '--trigger', 'spike', '--format', 'csv').stdout);
    expect(typed.stdout.split('\n')[1]).toMatch(/^no retry,LIFO,1,1,/);
  });

  it('--trace SEED: per-second CSV of each combination, one line a second', () => {
    const r = lab('metastable', '--trace', '0', '--policies', '3 retries', '--servers', 'FIFO');
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('policy,server,second,fresh,offered,goodput,queue,wasted,shed');
    expect(lines).toHaveLength(61);
    const last = lines[60]!.split(',');
    expect(last.slice(0, 3)).toEqual(['3 retries', 'FIFO', '59']);
    expect(Number(last[5])).toBe(0); // goodput at 59 s: still down
    expect(Number(last[6])).toBeGreaterThan(20_000); // the queue
    // --seeds naming the traced seed asks for nothing else: the same trace.
    const same = lab('metastable', '--trace', '0', '--seeds', '0', '--policies', '3 retries', '--servers', 'FIFO');
    expect(same.stderr).toBe('');
    expect(same.stdout).toBe(r.stdout);
  });

  it.each([
    [['--policies', 'retry forever'], '--policies "retry forever": unknown policy "retry forever"'],
    [['--servers', 'PRIORITY'], '--servers "PRIORITY": unknown server "PRIORITY" (choose from FIFO, LIFO, drop expired, shedding)'],
    [['--trigger', 'flood'], '--trigger "flood": expected capacity'],
    [['--trigger', 'spik'], '--trigger "spik": expected capacity (the server at half speed 10–15 s) or spike (new requests at twice the rate 10–15 s) (did you mean spike?)'],
    [['--servers', 'lfo'], '--servers "lfo": unknown server "lfo" (did you mean LIFO? choose from FIFO, LIFO, drop expired, shedding)'],
    [['--servers', 'LIFO,lifo'], '--servers "LIFO,lifo": a server is listed twice'],
    [['--policies', 'no retyr'], '--policies "no retyr": unknown policy "no retyr" (did you mean no retry?'],
    [['--policies', '3 retry'], '--policies "3 retry": unknown policy "3 retry" (did you mean 3 retries?'],
    [['--trace', '0-3'], '--trace "0-3": give one seed'],
    [['--trace', '0', '--seeds', '1'], '--seeds "1": --trace "0" traces seed 0 alone (a trace is one seed\'s series): drop --seeds to trace seed 0, or give --trace 1 to trace seed 1'],
    [['--trace', '0', '--seeds', 'x'], '--seeds "x"'],
    [['--trace', '0', '--format', 'table'], '--format table has no trace form'],
    [['--config', 'x.json', '--policies', 'no retry'], '--config runs the file\'s own policies'],
  ])('refuses %j, naming the flag', (args, message) => {
    const r = lab('metastable', ...args);
    expect(r.status).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(message);
  });
});

describe('metastable scenario files', () => {
  it('a file crosses its policies with its servers, under its own setup and seeds', () => {
    const dir = tempDir();
    const file = join(dir, 'spike.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'short spike',
        seeds: '0-1',
        ratePerSecond: 100,
        horizonMs: 30_000,
        server: { workers: 20, serviceMs: 100 },
        trigger: { kind: 'spike', startMs: 5000, endMs: 8000, factor: 3 },
        policies: [{ name: 'two tries', backoff: { kind: 'full jitter', initialBackoffMs: 50 }, maxAttempts: 2, budget: { kind: 'retry throttling', maxTokens: 10, tokenRatio: 0.1 } }],
        servers: { FIFO: {}, 'FIFO + deadline': { dropExpired: true } },
      }),
    );
    const r = lab('metastable', '--config', file);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('# metastable, scenario "short spike": 100 new requests/s (Poisson) from 10 client processes to 20 workers, service exponential mean 100 ms (200/s)');
    expect(r.stdout).toContain('trigger: new requests at 3× the rate 5–8 s; 30 s runs, seeds 0-1');
    expect(r.stdout).toMatch(/^two tries {3}FIFO \+ deadline +2\/2 {3}0\.0 /m);
  });

  it('a policy may hold an adaptive throttle (one per client process), checked and run', () => {
    const throttle = { kind: 'adaptive throttling', k: 2, windowMs: 10_000, buckets: 10, maxRejectionProbability: 1 };
    const { settings } = parseMetastableConfig({ policies: [{ name: 'adaptive', backoff: { kind: 'full jitter' }, maxAttempts: 4, throttle }] }, 'f.json');
    expect(settings.combinations[0]!.policy.throttle).toEqual(throttle);
  });

  it.each([
    [{ workers: 5 }, 'workers is not a known field'],
    [{ horizon: 5000 }, 'horizon is not a known field (did you mean horizonMs?)'],
    [{ servers: { X: { dropExpird: true } } }, 'servers.X.dropExpird is not a known field (did you mean dropExpired?)'],
    [{ server: { dicipline: 'lifo' } }, 'server.dicipline is not a known field (did you mean discipline?)'],
    [{ policies: [{ name: 'x', backof: { kind: 'exponential' }, maxAttempts: 2 }] }, 'policies[0].backof is not a known field (did you mean backoff?)'],
    [{ server: { workers: 0 } }, 'server.workers must be'],
    [{ server: { discipline: 'random' } }, 'server.discipline must be one of "fifo", "lifo", got "random"'],
    // A file keeps the exact spelling (other tools read it back); the refusal names it.
    [{ server: { discipline: 'LIFO' } }, 'server.discipline must be one of "fifo", "lifo", got "LIFO" (did you mean "lifo"?)'],
    [{ trigger: { kind: 'spike', factor: 0.5 } }, 'trigger.factor must be'],
    [{ horizonMs: 4500 }, 'horizonMs must be a whole number of seconds, got 4500'],
    [{ policies: [{ name: 'x', backoff: { kind: 'exponential', initialBackoffMs: -1 }, maxAttempts: 2 }] }, 'policies[0].backoff.initialBackoffMs'],
    [{ policies: [{ name: 'x', backoff: { kind: 'exponential' }, maxAttempts: 2 }, { name: 'x', backoff: { kind: 'exponential' }, maxAttempts: 3 }] }, 'policies[1].name "x" is used twice'],
    [{ servers: { slow: { workers: 0 } } }, 'servers.slow: server.workers must be'],
    [{ servers: {} }, 'servers must name at least one server variant'],
    [{ seeds: [1, 1] }, 'seeds must list each seed once'],
    [{ server: [] }, 'server must be an object, got []'],
    [{ policies: [{ name: 'x', backoff: { kind: 'exponential' }, maxAttempts: 2, throttle: { kind: 'adaptive throttling', k: 0.5 } }] }, 'policies[0].throttle.k'],
    [{ policies: [{ name: 'x', backoff: { kind: 'exponential' }, maxAttempts: 2, throttle: { kind: 'throttle' } }] }, 'policies[0].throttle.kind must be'],
  ])('%j is refused, naming the field', (json, message) => {
    expect(() => parseMetastableConfig(json, 'f.json')).toThrow(message);
  });
});

describe('a scenario file of the other kind', () => {
  // docs/lab.md's examples of each kind, as a user would copy them.
  const herdFile = {
    name: 'herd, smaller server',
    clients: 1000,
    arrivals: { kind: 'together', spreadMs: 0 },
    server: { tickMs: 10, capacityPerTick: 3, crashWindowTicks: 10, crashLimit: 100, restartMs: 1000, startupMs: 1000, outages: [] },
    horizonMs: 120000,
    stopWhenIdle: true,
    seeds: '0-19',
    policies: ['full jitter', { name: 'gRPC default', backoff: { kind: 'proportional jitter', initialBackoffMs: 100, backoffMultiplier: 2, maxBackoffMs: 1000, jitter: 0.2 }, maxAttempts: 5 }],
  };
  const metastableFile = {
    name: 'short spike',
    seeds: '0-19',
    ratePerSecond: 100,
    processes: 10,
    timeoutMs: 1000,
    horizonMs: 30000,
    server: { workers: 20, serviceMs: 100, service: 'exponential', discipline: 'fifo' },
    trigger: { kind: 'spike', startMs: 5000, endMs: 8000, factor: 3 },
    policies: [{ name: 'two tries', backoff: { kind: 'full jitter', initialBackoffMs: 50 }, maxAttempts: 2, budget: { kind: 'retry throttling', maxTokens: 10, tokenRatio: 0.1 } }],
    servers: { FIFO: {}, 'FIFO + deadline': { dropExpired: true } },
  };
  const dir = tempDir();
  const file = (name: string, json: unknown): string => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(json, null, 2));
    return path;
  };

  it('a herd scenario given to metastable --config says which commands take it', () => {
    const path = file('herd.json', herdFile);
    const r = lab('metastable', '--config', path);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`herdless-lab: --config ${JSON.stringify(path)}: server.tickMs is not a known field (a herd or budget scenario: give it to herd --config or budget --config)\n`);
    expect(r.status).toBe(2);
  });

  it('a metastable scenario given to herd --config or budget --config says which command takes it', () => {
    const path = file('spike.json', metastableFile);
    for (const command of ['herd', 'budget']) {
      const r = lab(command, '--config', path);
      expect(r.stderr).toBe(`herdless-lab: --config ${JSON.stringify(path)}: server.workers is not a known field (a metastable scenario: give it to metastable --config)\n`);
      expect(r.status).toBe(2);
    }
  });

  it('a misspelt field of the right kind still gets its "did you mean"', () => {
    expect(() => parseMetastableConfig({ ratePerSecnd: 100 }, 'f.json')).toThrow('f.json: ratePerSecnd is not a known field (did you mean ratePerSecond?)');
    expect(() => parseMetastableConfig({ ratePerSecond: 100, server: { worker: 2 } }, 'f.json')).toThrow('f.json: server.worker is not a known field (did you mean workers?)');
  });
});
