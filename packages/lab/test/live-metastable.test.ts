import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { METASTABLE_POLICIES, METASTABLE_SERVERS, metastableRun, metastableSetup, type MetastableRun, type MetastableServer } from 'herdless/sim';
import { startQueueServer } from '../src/live/queue-server.js';
import { LIVE_FIGURES } from '../src/report/live.js';
import { liveMetastableCsv, liveMetastableJson, liveMetastableTable, runLiveMetastable } from '../src/live/queue-experiment.js';
import { alive } from './lab-server.js';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const lab = (...args: string[]) => {
  const r = spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

/**
 * A small queue the machine holds easily: 40 new requests a second against 5 workers at 100 ms
 * (50 a second, 80% load), clients that give up after 1 s, the server at a quarter of its speed
 * from 1 s to 3 s, 8 s runs. In the simulator, seeds 0–19, plain retries serve 0% of the new
 * requests from 5 s to 8 s in every seed, and dropping expired requests 96–141%: a margin wide
 * enough for one live run on a busy machine, where timers run late by tens of milliseconds.
 */
const SETUP = metastableSetup({
  ratePerSecond: 40,
  processes: 4,
  timeoutMs: 1000,
  horizonMs: 8000,
  server: { workers: 5, serviceMs: 100 },
  trigger: { kind: 'capacity', startMs: 1000, endMs: 3000, factor: 0.25 },
});
const plain = METASTABLE_POLICIES.find((p) => p.name === '3 retries')!;
const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

describe('lab live metastable, scaled down: 8 s runs on real sockets against a lab server in its own process', () => {
  it('agrees in kind with the simulator: plain retries stay down after the trigger, dropping expired requests recovers', async () => {
    const lines: string[] = [];
    const result = await runLiveMetastable({
      setup: SETUP,
      combinations: [
        { policy: plain, server: 'FIFO', overrides: {} },
        { policy: plain, server: 'drop expired', overrides: METASTABLE_SERVERS['drop expired']! },
      ],
      seed: 0,
      simSeeds: [0, 1, 2, 3],
      progress: (l) => lines.push(l),
    });
    const pid = Number(/\(pid (\d+)\)/.exec(lines.join('\n'))?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(false); // the server process is stopped with the run

    const [fifo, drop] = result.rows;
    // Goodput from 5 s to the end, as a share of the new requests then (2 s after the trigger's end).
    const after = (r: typeof fifo): number => sum(r!.live.goodput.slice(5)) / sum(r!.live.fresh.slice(5));
    expect(after(fifo)).toBeLessThan(0.3);
    expect(after(drop)).toBeGreaterThan(0.6);
    expect(after(fifo)).toBeLessThan(after(drop) / 2);
    // The simulator says the same of the same setup, by the same measure (seeds 0–3).
    for (const seed of [0, 1, 2, 3]) {
      const sim = (server: Partial<MetastableServer>) => metastableRun(plain, { ...SETUP, server: { ...SETUP.server, ...server } }, seed);
      const share = (r: MetastableRun): number => sum(r.goodput.slice(5)) / sum(r.fresh.slice(5));
      expect(share(sim({}))).toBeLessThan(0.3);
      expect(share(sim({ dropExpired: true }))).toBeGreaterThan(0.6);
    }
    expect(fifo!.sim.recovered).toBe(0);

    for (const row of [fifo!, drop!]) {
      const { live } = row;
      const server = live.server!;
      expect(server.model).toBe('metastable');
      expect(server.server.dropExpired).toBe(row.server === 'drop expired');
      // Every second has its new requests (about 40, Poisson); sends at least the new requests.
      expect(live.fresh.length).toBe(8);
      expect(sum(live.offered)).toBeGreaterThanOrEqual(sum(live.fresh) - sum(live.throttled));
      // The server saw what the clients sent, give or take the attempts in flight at the horizon.
      expect(server.totals.arrivals).toBeLessThanOrEqual(sum(live.offered));
      expect(server.totals.arrivals).toBeGreaterThan(0.9 * sum(live.offered));
      // The clients counted what the server answered in time (answers in flight at the horizon aside).
      expect(sum(live.goodput)).toBeLessThanOrEqual(server.totals.served);
    }
    // Plain retries keep the server busy for clients that left: wasted work and a queue after the trigger.
    expect(sum(fifo!.live.wasted.slice(5))).toBeGreaterThan(50);
    expect(Math.max(...fifo!.live.queue)).toBeGreaterThan(Math.max(...drop!.live.queue));
    // Dropping expired requests drops them instead of serving them.
    expect(drop!.live.server!.totals.dropped + drop!.live.server!.totals.wasted).toBeGreaterThan(0);

    const table = liveMetastableTable(result);
    expect(table).toMatch(/^3 retries\s+FIFO\s+metastable 4\/4\s+metastable/m);
    expect(table).toMatch(/^3 retries\s+drop expired\s+recovered /m);
    const json = liveMetastableJson(result) as { experiment: string; rows: { live: { perSecond: { goodput: number[] } } }[] };
    expect(json.experiment).toBe('live-metastable');
    expect(json.rows[0]!.live.perSecond.goodput).toEqual(fifo!.live.goodput);
    const ajv = new Ajv2020({ allErrors: true, strict: true });
    const schema = ajv.compile(JSON.parse(readFileSync(fileURLToPath(new URL('../schemas/live-metastable.schema.json', import.meta.url)), 'utf8')));
    expect(schema(JSON.parse(JSON.stringify(json))), JSON.stringify(schema.errors)).toBe(true);
    expect(schema({ ...json, rows: [{ policy: 'x', server: 'y', sim: {}, live: {} }] })).toBe(false);
    // The report's figure: each live run above the simulator's seed 0 on the same setup.
    const figure = LIVE_FIGURES.find((f) => f.id === 'live-metastable-seconds')!;
    const points = (await figure.data(new Map([['live', { metastable: result }]]))) as { combination: string; second: number; goodput: number }[];
    expect([...new Set(points.map((p) => p.combination))]).toEqual([
      '3 retries · FIFO, live',
      '3 retries · FIFO, simulator seed 0',
      '3 retries · drop expired, live',
      '3 retries · drop expired, simulator seed 0',
    ]);
    expect(points.filter((p) => p.combination === '3 retries · FIFO, live').map((p) => p.goodput)).toEqual(fifo!.live.goodput);
    expect(points.filter((p) => p.combination === '3 retries · FIFO, simulator seed 0').map((p) => p.goodput)).toEqual(metastableRun(plain, SETUP, 0).goodput);
    const explain = figure.explanation as unknown as (p: typeof points) => string;
    expect(explain(points)).toMatch(/plain retries answer \d+% of the new requests in time live and \d+% simulated/);
    const csv = liveMetastableCsv(result).split('\n');
    expect(csv).toHaveLength(3);
    expect(csv[1]).toMatch(/^3 retries,FIFO,0,4,,false,,/);
  }, 120_000);

  it('the queue server: shedding in front answers a retry that finds every worker busy 503 "don\'t retry"; a bad reset is a 400 naming the field', async () => {
    const server = await startQueueServer({ server: { ...SETUP.server, workers: 1, serviceMs: 2000, service: 'constant', shedding: true }, trigger: SETUP.trigger, seed: 0 }, 0);
    try {
      const first = fetch(server.url);
      // Wait until the first request holds the one worker (it holds it 2 s: time enough for the second to arrive on a busy machine).
      while (server.stats().busy < 1) await new Promise((resolve) => setTimeout(resolve, 5));
      const shed = await fetch(server.url, { headers: { 'x-herdless-attempt': '2' } });
      expect(shed.status).toBe(503);
      expect(shed.headers.get('x-herdless-retry')).toBe('no');
      expect(shed.headers.get('retry-after')).toMatch(/^\d+$/);
      expect((await first).status).toBe(200);
      const stats = server.stats();
      expect(stats.totals).toMatchObject({ arrivals: 1, served: 1, shed: 1 });
      const bad = await fetch(new URL('/_lab/reset', server.url), { method: 'POST', body: JSON.stringify({ server: { workers: 0 } }) });
      expect(bad.status).toBe(400);
      expect(await bad.text()).toMatch(/^bad reset: server\.workers must be/);
      const misspelt = await fetch(new URL('/_lab/reset', server.url), { method: 'POST', body: JSON.stringify({ server: { dicipline: 'lifo' } }) });
      expect(misspelt.status).toBe(400);
      expect(await misspelt.text()).toMatch(/^bad reset: server\.dicipline is not a field of the reset body \(did you mean discipline\? server's fields: workers, /);
      const notJson = await fetch(new URL('/_lab/reset', server.url), { method: 'POST', body: '{' });
      expect(notJson.status).toBe(400);
      const good = await fetch(new URL('/_lab/reset', server.url), { method: 'POST', body: JSON.stringify({ server: { discipline: 'lifo' }, seed: 2 }) });
      expect(good.status).toBe(204);
      expect(server.stats()).toMatchObject({ seed: 2, server: { discipline: 'lifo', shedding: true }, totals: { arrivals: 0 } });
    } finally {
      await server.close();
    }
  });

  it('refuses what it cannot run, naming the flag', () => {
    const startup = lab('server', '--model', 'metastable', '--startup', '1');
    expect(startup.status).toBe(2);
    expect(startup.stderr).toContain('--startup and --outage belong to the article');
    const policy = lab('live', 'metastable', '--policies', '3 retriez');
    expect(policy.status).toBe(2);
    expect(policy.stderr).toContain('3 retriez');
    // The trigger ends at 10 s: the last 10 s must lie after it, so 19 s is too short and 20 s the least.
    const horizon = lab('live', 'metastable', '--horizon', '19');
    expect(horizon.status).toBe(2);
    expect(horizon.stderr).toContain('--horizon');
    expect(horizon.stderr).toContain('20');
    expect(lab('live', 'nope').stderr).toContain('metastable');
  });
});
