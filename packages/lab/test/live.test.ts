import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { budgetRow, budgetScenario } from 'herdless/sim';
import { liveBudgetJson, liveHerdJson, liveHerdTable, runLiveHerd, type LiveBudgetResult } from '../src/live/experiments.js';
import { LIVE_FIGURES } from '../src/report/live.js';
import { alive } from './lab-server.js';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const lab = (...args: string[]) => {
  const r = spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 300_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

/** Handles of this process by kind (sockets, timers, child processes…), as Node.js lists them. */
function resources(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) out[r] = (out[r] ?? 0) + 1;
  return out;
}

describe('lab live herd, scaled down: 100 clients, 5 s, real sockets', () => {
  it('counts every request on both sides, and leaves no socket, timer or child process', async () => {
    const before = resources();
    const lines: string[] = [];
    const result = await runLiveHerd(['full jitter', 'exponential'], { clients: 100, horizonMs: 5000, seed: 0, simSeeds: [0, 1], progress: (l) => lines.push(l) });
    const pid = Number(/\(pid (\d+)\)/.exec(lines.join('\n'))?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(false);
    await new Promise((resolve) => setImmediate(resolve)); // handles closed in the last turn leave the list now
    const after = resources();
    // vitest's own timer for the test may come and go: timers may only be fewer.
    expect((after.Timeout ?? 0) <= (before.Timeout ?? 0)).toBe(true);
    delete after.Timeout;
    delete before.Timeout;
    expect(after).toEqual(before);

    expect(result.where.kind).toBe('lab server');
    expect(result.rows.map((r) => r.strategy)).toEqual(['full jitter', 'exponential']);
    for (const { live, sim } of result.rows) {
      const server = live.server!;
      // Every client sent at least once; each request ended (success or not) or was cut at the horizon.
      expect(live.requests).toBeGreaterThanOrEqual(100);
      expect(live.succeeded + live.gaveUp + live.outstanding).toBe(100);
      expect(live.gaveUp).toBe(0); // no attempt cap in the herd
      // Arrivals per tick on the fleet's clock add up to the sends; the first wave is 100 first sends.
      expect(live.perTick.arrivals.reduce((a, b) => a + b, 0)).toBe(live.requests);
      expect(live.perTick.fresh.reduce((a, b) => a + b, 0)).toBe(100);
      expect(live.perTick.retries.reduce((a, b) => a + b, 0)).toBe(live.requests - 100);
      // The server saw what was sent (less what the horizon cut before it arrived) and served what succeeded.
      expect(server.totals.arrivals).toBeLessThanOrEqual(live.requests);
      expect(server.totals.arrivals).toBeGreaterThanOrEqual(live.requests - live.outstanding);
      expect(server.totals.successes).toBeGreaterThanOrEqual(live.succeeded);
      expect(server.arrivals.reduce((a, b) => a + b, 0)).toBe(server.totals.arrivals);
      // 100 clients with one request each in flight never exceed the crash limit (100 in 100 ms).
      expect(live.crashes).toBe(0);
      expect(sim.crashes.max).toBe(0);
      if (live.finished) {
        expect(live.succeeded).toBe(100);
        expect(server.totals.arrivals).toBe(live.requests);
        expect(server.totals.successes).toBe(100);
        expect(live.finishS).toBeLessThanOrEqual(5);
      } else {
        expect(live.finishS).toBe(5);
      }
      // Nobody can succeed during the 1 s start-up: the first success comes after it.
      expect(live.perTick.successes.subarray(0, 100).reduce((a, b) => a + b, 0)).toBe(0);
      expect(live.lateness.count).toBe(live.requests);
      expect(live.lateness.p99).toBeGreaterThanOrEqual(live.lateness.p50);
    }
    expect(lines.some((l) => l.startsWith('live herd: full jitter (1/2)'))).toBe(true);

    // Both sides in the output: the JSON contract and the side-by-side table.
    const json = liveHerdJson(result) as Record<string, unknown> & { rows: { strategy: string; sim: object; live: Record<string, unknown> }[] };
    expect(Object.keys(json)).toEqual(['schemaVersion', 'experiment', 'target', 'clients', 'horizon', 'seed', 'simSeeds', 'rows', 'lateness', 'serverLateness']);
    expect(json.experiment).toBe('live-herd');
    expect(json.horizon).toBe(5);
    expect(Object.keys(json.rows[0]!.sim)).toEqual(['finish', 'requests', 'crashes', 'unfinished']);
    expect(json.rows[0]!.live.requests).toBe(result.rows[0]!.live.requests);
    expect((json.rows[0]!.live.arrivalsPerWindow as number[]).reduce((a, b) => a + b, 0)).toBe(result.rows[0]!.live.requests);
    const table = liveHerdTable(result).split('\n');
    expect(table[0]).toMatch(/^# live herd: 100 clients on real sockets against a lab server in its own process \(http:\/\/127\.0\.0\.1:\d+\/\), horizon 5\.0 s, live seed 0; simulator: seeds 0-1/);
    expect(table[3]).toMatch(/^full jitter +\d+\.\d\d \( *\d+\.\d\d- *\d+\.\d\d\) +\d+\.\d\d[ *] +[+−]\d+%/);
    expect(table.some((l) => l.startsWith('instrument: send lateness (actual send time − the time the policy chose) p50 '))).toBe(true);
    expect(table.some((l) => l.startsWith('server: tick timer lateness (its worst run) p50 '))).toBe(true);

    // Both documents hold their JSON Schemas (the budget one built from this run's figures).
    const ajv = new Ajv2020({ allErrors: true, strict: true });
    const schema = (name: string) => ajv.compile(JSON.parse(readFileSync(fileURLToPath(new URL(`../schemas/${name}`, import.meta.url)), 'utf8')));
    const herdSchema = schema('live-herd.schema.json');
    expect(herdSchema(JSON.parse(JSON.stringify(json))), JSON.stringify(herdSchema.errors)).toBe(true);
    expect(herdSchema({ ...json, rows: [{ strategy: 'x', sim: {}, live: {} }] })).toBe(false);
    // A send can read a hair early (timers keep whole ms): a negative lateness is a valid figure.
    expect(herdSchema({ ...JSON.parse(JSON.stringify(json)), lateness: { p50: -0.4, p99: 2, max: 3, count: 10 } }), JSON.stringify(herdSchema.errors)).toBe(true);
    const budget: LiveBudgetResult = {
      ...result,
      rows: [{ policy: 'no retry', sim: budgetRow(budgetScenario('no retry'), [0]), live: result.rows[0]!.live, metrics: { load: 1, crashesAfter: 0, backToNormal: 15, retryShare: 0 } }],
    };
    const budgetSchema = schema('live-budget.schema.json');
    const budgetDoc = JSON.parse(JSON.stringify(liveBudgetJson(budget))) as Record<string, unknown>;
    expect(Object.keys(budgetDoc)[0]).toBe('schemaVersion');
    expect(budgetSchema(budgetDoc), JSON.stringify(budgetSchema.errors)).toBe(true);

    // The report's figure: the server's arrivals per 100 ms of each live run over the simulator's seed 0.
    const bins = (await LIVE_FIGURES[0]!.data(new Map([['live', { herd: result }]]))) as { series: string; t: number; arrivals: number }[];
    const sum = (series: string): number => bins.filter((b) => b.series === series).reduce((a, b) => a + b.arrivals, 0);
    expect([...new Set(bins.map((b) => b.series))]).toEqual(['full jitter, live', 'full jitter, simulator seed 0', 'exponential, live', 'exponential, simulator seed 0']);
    expect(sum('full jitter, live')).toBe(result.rows[0]!.live.server!.totals.arrivals);
    expect(sum('exponential, simulator seed 0')).toBe(result.simArrivals[1]!.reduce((a, b) => a + b, 0));
  });
});

describe('lab server', () => {
  it('answers 503 during start-up, 200 after, serves its stats, and stops on SIGTERM', async () => {
    const startupMs = 500;
    const child = spawn(process.execPath, [main, 'server', '--port', '0', '--startup', String(startupMs / 1000), '--outage', '30-40'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(out)), 60_000);
        child.stdout.on('data', () => {
          const m = /lab server: (http:\/\/127\.0\.0\.1:\d+\/).*\nmodel: .*\n/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
      });
      expect(out).toContain('start-up 0.5 s, outages 30 s–40 s');
      // Measured against the machine: the server's time 0 is its reset, which arrives after
      // `sent`, and it answers before `answered`; so when the two are less than the start-up
      // apart, the request was inside the start-up whatever the machine's load. A round that took
      // longer (a busy machine) proves nothing and is tried again.
      let first: Response | undefined;
      let answered = 0;
      for (let round = 0; round < 20 && first === undefined; round++) {
        const sent = performance.now();
        expect((await fetch(new URL('/_lab/reset', url), { method: 'POST' })).status).toBe(204);
        const res = await fetch(url);
        answered = performance.now();
        if (answered - sent < startupMs) first = res;
        else await res.arrayBuffer();
      }
      expect(first, 'no reset and request within 0.5 s in 20 rounds').toBeDefined();
      expect(first!.status).toBe(503);
      expect(await first!.text()).toBe('unavailable\n');
      // The reset had arrived before `answered`: after it plus the start-up, time 0 is at least
      // 0.5 s ago on the server's clock.
      await new Promise((r) => setTimeout(r, startupMs - (performance.now() - answered) + 5)); // + 5: a timer may fire a ms early
      const second = await fetch(new URL('/any/path?x=1', url), { method: 'POST', body: 'ignored' });
      expect(second.status).toBe(200);
      expect(await second.text()).toBe('ok\n');
      const stats = (await (await fetch(new URL('/_lab/stats', url))).json()) as { totals: unknown; server: { startupMs: number; outages: unknown } };
      expect(stats.totals).toEqual({ arrivals: 2, successes: 1, crashes: 0 });
      expect(stats.server.startupMs).toBe(startupMs);
      expect(stats.server.outages).toEqual([{ startMs: 30_000, endMs: 40_000 }]);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(out).toContain('stopped (SIGTERM): 2 arrivals, 1 served, 0 crashes since time 0');
    } finally {
      // A failed expectation must not leave the server running.
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});

describe('lab server --config', () => {
  it('takes the model from a scenario file\'s server, flags over it', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'herdless-live-')), 'scenario.json');
    const server = { tickMs: 20, capacityPerTick: 3, crashWindowTicks: 5, crashLimit: 40, restartMs: 500, startupMs: 0, outages: [{ startMs: 2000, endMs: 2500 }] };
    writeFileSync(file, JSON.stringify({ clients: 10, arrivals: { kind: 'together', spreadMs: 0 }, server, horizonMs: 10_000, policies: ['full jitter'] }));
    const child = spawn(process.execPath, [main, 'server', '--config', file, '--startup', '0.5'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(out)), 60_000);
        child.stdout.on('data', () => {
          if (/\nmodel: .*\n/.test(out)) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(out).toContain(
        'model: 3 served per 20 ms tick (first come, first served), a crash above 40 arrivals in 100 ms (down 0.5 s), start-up 0.5 s, outages 2 s–2.5 s\n',
      );
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(dirname(file), { recursive: true, force: true });
    }
  });
});

describe('lab live / server: bad input exits 2 with one line', () => {
  it.each([
    [['live'], /^herdless-lab: live: name the experiment: `live herd`, `live budget` or `live metastable`/],
    [['live', 'herd', '--horizon', '0'], /^herdless-lab: --horizon "0": expected a number from 0\.01 to 3600\n$/],
    [['live', 'herd', '--target', 'ftp://127.0.0.1/x'], /^herdless-lab: --target "ftp:\/\/127\.0\.0\.1\/x": not an HTTP URL \(expected http:\/\/ or https:\/\/, got ftp:\)\n$/],
    [['live', 'herd', '--target', 'not a url'], /^herdless-lab: --target "not a url": not a URL/],
    [['live', 'herd', '--strategies', 'full jitter,slow'], /^herdless-lab: --strategies "full jitter,slow": unknown strategy "slow"/],
    [['live', 'herd', '--clients', '0'], /^herdless-lab: --clients "0": expected an integer from 1 to 10000\n$/],
    // A seed has one range everywhere (PyRandom takes any safe integer): live herd's was 2^32 − 1.
    [['live', 'herd', '--seeds', '9007199254740992'], /^herdless-lab: --seeds "9007199254740992": seeds must be ≤ 9007199254740991\n$/],
    [['waits', '--seeds', '9007199254740992'], /^herdless-lab: --seeds "9007199254740992": seeds must be ≤ 9007199254740991\n$/],
    // One flag name for a run's seed in every command: a live run takes one, the simulator's beside it a list.
    [['live', 'herd', '--seeds', '0-19'], /^herdless-lab: --seeds "0-19": a live run draws its waits from one seed \(the simulator's seeds beside it are --sim-seeds\): give one seed, e.g. --seeds 0\n$/],
    [['live', 'herd', '--seed', '3'], /^herdless-lab: unknown option '--seed' \(did you mean --seeds\?\)\n$/],
    [['live', 'budget', '--sim-seeds', '5-1'], /^herdless-lab: --sim-seeds "5-1": the range 5-1 goes down; write 1-5\n$/],
    [['live', 'budget', '--horizon', '10'], /^herdless-lab: --horizon "10": expected a number from 18 to 3600\n$/],
    [['live', 'budget', '--policies', 'none'], /^herdless-lab: --policies "none": unknown policy "none"/],
    [['live', 'budget', '--policies', '4 attempt'], /^herdless-lab: --policies "4 attempt": unknown policy "4 attempt" \(did you mean 4 attempts\? choose from no retry, /],
    [['live', 'herd', '--format', 'tabel'], /^herdless-lab: option '--format <format>' argument 'tabel' is invalid\. Did you mean table\? Allowed choices are table, json, csv\.\n$/],
    [['live', 'herdd'], /^herdless-lab: live: unknown experiment "herdd" \(did you mean herd\?\)\n$/],
    [['live', 'budgett', '--seeds', '1'], /^herdless-lab: live: unknown experiment "budgett" \(did you mean budget\?\)\n$/],
    [['live', 'quux'], /^herdless-lab: live: unknown experiment "quux" \(experiments: herd, budget, metastable; see `live herd --help`\)\n$/],
    [['help', 'live', 'herdd'], /^herdless-lab: help live herdd: "herdd" is not a command of live \(did you mean herd\? choose from herd, budget, metastable\)\n$/],
    [['server', '--outage', '15-5'], /^herdless-lab: --outage "15-5": expected START-END in seconds/],
    [['server', '--startup', '-1'], /^herdless-lab: --startup "-1": expected a number from 0 to 3600\n$/],
  ])('%j', (args, message) => {
    const r = lab(...args);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(r.stdout).toBe('');
  });

  it('an unreachable target', async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    const r = lab('live', 'herd', '--target', `http://127.0.0.1:${port}/`);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`herdless-lab: --target "http://127.0.0.1:${port}/": unreachable (ECONNREFUSED)\n`);
  });

  it('a busy port', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const r = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [main, 'server', '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
        child.once('exit', (status) => resolve({ status, stderr }));
      });
      expect(r.status).toBe(2);
      expect(r.stderr).toBe(`herdless-lab: --port ${port}: already in use (try another, or 0 for any free port)\n`);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });
});
