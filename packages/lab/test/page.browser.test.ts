import { spawnSync } from 'node:child_process';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from './lab-server.js';
import { tempDir } from './temp.js';

/*
 * The lab page in a real browser: Debian's chromium driven by playwright-core (no browser download).
 * `.ci/run` installs chromium when it is missing; on a developer machine without it the test is
 * skipped with a note, but under CI=true a missing browser is a failure.
 *
 * Every wait waits for a run by its id: the page numbers each run it starts (`data-run-id` on
 * <body>) and records the id of the run whose results it shows (`data-done-id`). A test presses
 * Run, reads the id of the run that press started, and waits for that id — never for a state that
 * an older run could also produce, and never for a length of time.
 */

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && !process.env.CI) console.warn(`page.browser.test: skipped, ${CHROMIUM} is missing (apt-get install chromium)`);

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const cli = (...args: string[]): string => {
  const r = spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) throw new Error(`herdless-lab ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

/** The page's state after its latest run: the table, a download's content, and the charts' mark labels. */
async function read(page: Page, download = 'herd-json') {
  return page.evaluate(async (download) => {
    const file = (id: string) => {
      const href = document.querySelector<HTMLAnchorElement>(`#download-${id}`)?.href;
      return href === undefined ? undefined : decodeURIComponent(href.slice(href.indexOf(',') + 1));
    };
    const labels = (sel: string) => [...document.querySelectorAll(`${sel} svg [aria-label]`)].map((e) => e.getAttribute('aria-label')!);
    return {
      table: document.querySelector('#table')!.textContent!,
      json: JSON.parse(file(download)!),
      scenario: file('scenario-json'),
      cli: document.querySelector('#cli')!.textContent!,
      arrivals: labels('#chart-arrivals'),
      seeds: labels('#chart-seeds'),
      perSecond: labels('#chart-per-second'),
      tokens: labels('#chart-tokens'),
      layers: labels('#chart-layers'),
      hedging: labels('#chart-hedging'),
      contention: labels('#chart-contention'),
      metastable: labels('#chart-metastable'),
      queue: labels('#chart-queue'),
    };
  }, download);
}

/** Presses Run and waits until the run that press started is shown; returns its id. */
async function run(page: Page): Promise<string> {
  await page.click('#run');
  const id = await page.evaluate(() => document.body.dataset.runId!);
  await page.waitForFunction((id) => document.body.dataset.doneId === id || (document.body.dataset.runId === id && document.body.dataset.state === 'failed'), id, { timeout: 120_000 });
  expect(await page.evaluate(() => [document.body.dataset.state, document.body.dataset.stale])).toEqual(['done', 'false']);
  return id;
}

/** Presses Run on a form with a mistake: nothing starts, the field is highlighted. */
async function refused(page: Page, input: string, message: string): Promise<void> {
  const before = await page.evaluate(() => document.body.dataset.runId);
  await page.click('#run');
  expect(await page.evaluate(() => [document.body.dataset.state, document.body.dataset.runId])).toEqual(['invalid', before]);
  expect(await page.textContent(`[data-error-for="${input}"]`)).toContain(message);
  expect(await page.getAttribute(`[data-input="${input}"]`, 'class')).toContain('invalid');
  expect(await page.locator('.invalid').count()).toBe(1);
  expect(await page.textContent('#status')).toContain('fix the highlighted field');
}

const bars = (labels: string[]) =>
  labels.map((l) => /^(.+) at ([\d.]+)-([\d.]+) s: (\d+) arrivals$/.exec(l)).filter((m) => m !== null).map((m) => ({ series: m[1]!, arrivals: Number(m[4]) }));

describe.skipIf(!haveChromium && !process.env.CI)('the lab page in chromium', () => {
  let server: ServeProcess;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    server = await startServe();
    context = await chromium.launchPersistentContext(tempDir('herdless-chromium-'), {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'],
      viewport: { width: 1280, height: 1400 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    await page.goto(server.url);
    // The page runs its defaults once on load: wait for that run by its id.
    await page.waitForFunction(() => document.body.dataset.runId !== undefined && document.body.dataset.doneId === document.body.dataset.runId, undefined, { timeout: 120_000 });
  });

  afterAll(async () => {
    await context?.close();
    if (server && server.child.exitCode === null) await server.stop();
  });

  it('switching exponential → full jitter updates the table and the charts to the CLI’s numbers', async () => {
    await page.fill('input[name=seeds]', '0-1');
    await run(page);
    const before = await read(page);
    expect(before.table).toContain('exponential    120.00 (120.00-120.00)      17000 (   17000-   17000)    14.0 (2 unfinished)');
    expect(bars(before.arrivals).every((b) => b.series === 'exponential' && b.arrivals === 1000)).toBe(true);

    await page.selectOption('select[name=strategy]', 'full jitter');
    await run(page);
    const after = await read(page);

    // The table: the very lines `herdless-lab herd` prints for the same strategy and seeds.
    const cliTable = cli('herd', '--strategies', 'full jitter', '--seeds', '0-1').trimEnd().split('\n').slice(1);
    expect(after.table.split('\n').slice(1)).toEqual(cliTable);
    expect(after.cli).toBe('npm run lab -- herd --strategies "full jitter" --seeds 0-1');
    // The data: rows and every run equal the CLI's JSON.
    const cliJson = JSON.parse(cli('herd', '--strategies', 'full jitter', '--seeds', '0-1', '--format', 'json', '--per-seed'));
    expect(after.json.rows).toEqual(cliJson.rows);
    expect(after.json.runs).toEqual(cliJson.runs);
    expect(cliJson.runs.map((r: { finish: number }) => r.finish)).toEqual([10.5, 11.13]);
    // The charts: each seed's bars carry the CLI's finish time, requests and gave-up count…
    for (const r of cliJson.runs as { seed: number; finish: number; requests: number; gaveUp: number }[]) {
      expect(after.seeds).toContain(`full jitter seed ${r.seed}: finishS ${r.finish}`);
      expect(after.seeds).toContain(`full jitter seed ${r.seed}: requests ${r.requests}`);
      expect(after.seeds).toContain(`full jitter seed ${r.seed}: gaveUp ${r.gaveUp}`);
    }
    // …and seed 0's arrivals add up to its requests, no longer one bar of 1000 per return.
    const arrivals = bars(after.arrivals);
    expect(arrivals.every((b) => b.series === 'full jitter')).toBe(true);
    expect(arrivals.reduce((n, b) => n + b.arrivals, 0)).toBe(cliJson.runs[0].requests);
    expect(arrivals.length).toBeGreaterThan(50);

    // The scenario file the page offers runs to the same numbers through --config.
    const file = join(tempDir('herdless-page-'), 'scenario.json');
    writeFileSync(file, after.scenario!);
    expect(JSON.parse(cli('herd', '--config', file, '--format', 'json')).rows).toEqual(cliJson.rows);

    const shot = join(process.env.HERDLESS_SCREENSHOT_DIR ?? tempDir('herdless-shot-'), 'lab-page.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(20_000);
  });

  it('an invalid value is highlighted beside its input, marks the results stale and runs nothing', async () => {
    await page.fill('input[name=capacity]', '-1');
    await refused(page, 'capacity', 'server.capacityPerTick must be ≥ 0, got -1');
    // The results shown are from the inputs before: marked so.
    expect(await page.evaluate(() => document.body.dataset.stale)).toBe('true');
    expect(await page.isVisible('#stale-note')).toBe(true);
    expect(await page.getAttribute('input[name=capacity]', 'aria-invalid')).toBe('true');
    await page.fill('input[name=capacity]', '5');
    // Numbers are read as strictly as the CLI reads them.
    await page.fill('input[name=clients]', '0x10');
    await refused(page, 'clients', 'clients must be a number, got "0x10"');
    await page.fill('input[name=clients]', '1000');
    for (const [text, message] of [
      ['2.5', 'policies[0].maxAttempts must be an integer, got 2.5'],
      ['lots', 'policies[0].maxAttempts must be'],
    ]) {
      await page.fill('input[name=maxAttempts]', text!);
      await refused(page, 'maxAttempts', message!);
    }
    await page.fill('input[name=maxAttempts]', '');
    await page.fill('input[name="param:maxBackoffMs"]', '-3');
    await refused(page, 'param:maxBackoffMs', 'policies[0].backoff.maxBackoffMs must be ≥ 0, got -3');
    expect(await page.inputValue('select[name=strategy]')).toBe('custom');
    await page.fill('input[name="param:maxBackoffMs"]', '10000');
    await run(page);
    expect(await page.textContent('[data-error-for=capacity]')).toBe('');
    expect(await page.locator('.invalid').count()).toBe(0);
    expect(await page.isVisible('#stale-note')).toBe(false);
  });

  it('a custom backoff with an attempt cap: table, command, scenario file, and the requests that gave up per seed', async () => {
    await page.fill('input[name="param:initialBackoffMs"]', '50');
    await page.fill('input[name=maxAttempts]', '3');
    await run(page);
    const custom = await read(page);
    expect(custom.cli).toBe('npm run lab -- herd --config scenario.json --seeds 0-1');
    const scenario = JSON.parse(custom.scenario!);
    expect(scenario.policies[0].backoff.initialBackoffMs).toBe(50);
    expect(scenario.policies[0].maxAttempts).toBe(3);
    const file = join(tempDir('herdless-page-'), 'scenario.json');
    writeFileSync(file, custom.scenario!);
    const viaCli = JSON.parse(cli('herd', '--config', file, '--format', 'json', '--per-seed'));
    expect(custom.json.rows).toEqual(viaCli.rows);
    // With 3 attempts some requests give up, and the per-seed chart shows how many.
    const gaveUp = (viaCli.runs as { seed: number; gaveUp: number }[]).map((r) => r.gaveUp);
    expect(Math.min(...gaveUp)).toBeGreaterThan(0);
    for (const r of viaCli.runs as { strategy: string; seed: number; gaveUp: number }[]) expect(custom.seeds).toContain(`${r.strategy} seed ${r.seed}: gaveUp ${r.gaveUp}`);
    expect(bars(custom.arrivals).reduce((n, b) => n + b.arrivals, 0)).toBe(viaCli.runs[0].requests);
    // The gave-up panel scales to its bars: the chart stays one or two rows of panels high.
    expect(await page.evaluate(() => document.querySelector('#chart-seeds')!.scrollHeight)).toBeLessThan(600);
  });

  it('a long run shows its progress within a seed and can be cancelled', async () => {
    await page.selectOption('select[name=strategy]', 'immediate'); // 12 million requests per run: seconds per seed
    await page.fill('input[name=seeds]', '0-19');
    // Every status line the run shows, in order, kept by the page itself: reading #status from here
    // after a wait races the worker (on a busy machine seed 0 can end between two reads).
    await page.evaluate(() => {
      const status = document.querySelector('#status')!;
      const seen: string[] = [];
      (window as unknown as { statuses: string[] }).statuses = seen;
      new MutationObserver(() => seen.push(status.textContent!)).observe(status, { childList: true, characterData: true, subtree: true });
    });
    await page.click('#run');
    const id = await page.evaluate(() => document.body.dataset.runId!);
    // Progress moves within the first seed, before any run has finished.
    await page.waitForFunction((id) => document.body.dataset.runId === id && Number(document.body.dataset.progress) > 0, id, { timeout: 120_000 });
    const statuses = (await page.evaluate(() => (window as unknown as { statuses: string[] }).statuses)).filter((s) => s.startsWith('running run'));
    expect(statuses[0]).toBe('running run 1 of 20 (immediate, seed 0): 0% of its simulated time');
    const withinFirst = statuses.filter((s) => /^running run 1 of 20 \(immediate, seed 0\): \d+% of its simulated time$/.test(s)).map((s) => Number(/(\d+)%/.exec(s)![1]));
    expect(Math.max(...withinFirst)).toBeGreaterThan(0);
    expect(await page.isEnabled('#cancel')).toBe(true);
    await page.click('#cancel');
    expect(await page.evaluate(() => document.body.dataset.state)).toBe('cancelled');
    expect(await page.textContent('#status')).toMatch(/^cancelled at run \d+ of 20 \(immediate, seed \d+\)/);
    expect(await page.isEnabled('#cancel')).toBe(false);
    // The cancelled run never shows: the results are still the last finished run's, marked stale.
    expect(await page.evaluate(() => [document.body.dataset.doneId !== undefined && document.body.dataset.doneId !== document.body.dataset.runId, document.body.dataset.stale])).toEqual([true, 'true']);
    await page.fill('input[name=seeds]', '0');
    await page.selectOption('select[name=strategy]', 'full jitter');
    await run(page);
    expect((await read(page)).table).toContain('full jitter');
  });

  it('budget: policies, outage and rate run to the CLI’s table, with the arrivals and token charts', async () => {
    await page.selectOption('select[name=experiment]', 'budget');
    expect(await page.isVisible('input[name=outageStartS]')).toBe(true);
    expect(await page.isVisible('input[name=clients]')).toBe(false);
    for (const box of await page.locator('input[name=budgetPolicies]').all()) {
      const name = await box.getAttribute('value');
      await box.setChecked(name === '4 attempts' || name === '4 attempts + gRPC throttling');
    }
    await page.fill('input[name=seeds]', '0-1');
    await run(page);
    const article = await read(page, 'budget-json');
    const policies = '4 attempts,4 attempts + gRPC throttling';
    expect(article.cli).toBe(`npm run lab -- budget --policies "${policies}" --seeds 0-1`);
    expect(article.table).toBe(cli('budget', '--policies', policies, '--seeds', '0-1').trimEnd());
    expect(article.json.rows).toEqual(JSON.parse(cli('budget', '--policies', policies, '--seeds', '0-1', '--format', 'json')).rows);
    expect(article.json.rows[0].load.mean).toBeGreaterThan(3.8);
    // The figures: seed 0's arrivals per second of both policies, and client 0's tokens.
    const trace = cli('budget', '--trace', '0', '--series', 'per-second', '--policies', policies).trimEnd().split('\n').slice(1);
    for (const line of trace.slice(0, 12)) {
      const [, policy, second, fresh, arrivals] = /^"(.*)",(\d+),(\d+),(\d+),/.exec(line)!;
      expect(article.perSecond).toContain(`${policy} at ${second} s: ${arrivals} arrivals, ${fresh} new`);
    }
    expect(article.perSecond.filter((l) => l === 'crash threshold: about 1000 arrivals per s')).toHaveLength(2);
    expect(article.tokens.length).toBeGreaterThan(0);

    // A shorter outage and a lower rate: the scenario file reproduces it through budget --config.
    await page.fill('input[name=outageStartS]', '8');
    await page.fill('input[name=outageEndS]', '12');
    await page.fill('input[name=ratePerSecond]', '20');
    await run(page);
    const mine = await read(page, 'budget-json');
    expect(mine.cli).toBe('npm run lab -- budget --config scenario.json --seeds 0-1');
    expect(mine.table.split('\n')[0]).toBe('# budget: 10 clients, 20 new requests/s each, the downstream down from 8 s to 12 s, seeds 0-1');
    const file = join(tempDir('herdless-page-'), 'scenario.json');
    writeFileSync(file, mine.scenario!);
    expect(mine.json.rows).toEqual(JSON.parse(cli('budget', '--config', file, '--format', 'json')).rows);
    expect(mine.json.rows).not.toEqual(article.json.rows);

    await page.fill('input[name=outageEndS]', '0x10');
    await refused(page, 'outageEndS', 'outage end (s) must be a number from 0 to 37 in plain decimal, got "0x10"');
    await page.fill('input[name=outageEndS]', '12');
    for (const box of await page.locator('input[name=budgetPolicies]').all()) await box.setChecked(false);
    await refused(page, 'budgetPolicies', 'pick at least one policy');
    await page.locator('input[name=budgetPolicies]').first().setChecked(true);
  });

  it('layers: depth and attempts per layer, both policies charted', async () => {
    await page.selectOption('select[name=experiment]', 'layers');
    expect(await page.isVisible('input[name=seeds]')).toBe(false);
    await page.fill('input[name=depth]', '4');
    await page.fill('input[name=attempts]', '2');
    await run(page);
    const every = await read(page, 'layers-json');
    expect(every.table).toBe(cli('layers', '--depth', '4', '--attempts', '2').trimEnd());
    expect(every.cli).toBe('npm run lab -- layers --depth 4 --attempts 2');
    expect(every.layers).toEqual(expect.arrayContaining(['every layer retries, frontend: 2 calls', 'every layer retries, backend 1: 4 calls', 'every layer retries, backend 2: 8 calls', 'every layer retries, db: 16 calls']));
    expect(every.layers).toEqual(expect.arrayContaining(['retry at one layer, frontend: 2 calls', 'retry at one layer, backend 1: 2 calls', 'retry at one layer, backend 2: 2 calls', 'retry at one layer, db: 2 calls']));
    await page.fill('input[name=attempts]', '11');
    await refused(page, 'attempts', 'attempts per layer must be an integer from 1 to 10 in plain decimal, got "11"');
    await page.fill('input[name=attempts]', '2');
  });

  it('at 360 px wide the form and every chart fit the screen', async () => {
    await page.setViewportSize({ width: 360, height: 800 });
    await run(page); // layers, redrawn for the narrow screen
    await page.selectOption('select[name=experiment]', 'herd');
    await page.fill('input[name=seeds]', '0-1');
    await run(page);
    const fit = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      charts: [...document.querySelectorAll<HTMLElement>('.chart')].filter((c) => c.offsetParent !== null).map((c) => [c.id, c.scrollWidth, c.clientWidth]),
    }));
    expect(fit.page).toBeLessThanOrEqual(360);
    expect(fit.charts.length).toBe(2);
    for (const [id, scroll, client] of fit.charts) expect(scroll, String(id)).toBeLessThanOrEqual(Number(client));
    await page.setViewportSize({ width: 1280, height: 1400 });
  });

  /** Saves a screenshot of `selector` (or the page) where a reader can look at it; returns its path. */
  async function screenshot(name: string, selector?: string): Promise<string> {
    const shot = join(process.env.HERDLESS_SCREENSHOT_DIR ?? tempDir('herdless-shot-'), name);
    if (selector === undefined) await page.screenshot({ path: shot, fullPage: true });
    else await page.locator(selector).screenshot({ path: shot });
    expect(statSync(shot).size).toBeGreaterThan(5_000);
    return shot;
  }

  it('at 1280 px the budget table is shown whole, its last column included', async () => {
    await page.setViewportSize({ width: 1280, height: 1400 });
    await page.selectOption('select[name=experiment]', 'budget');
    for (const box of await page.locator('input[name=budgetPolicies]').all()) await box.setChecked(true);
    await page.fill('input[name=seeds]', '0-1');
    await page.fill('input[name=outageStartS]', '5');
    await page.fill('input[name=outageEndS]', '15');
    await page.fill('input[name=ratePerSecond]', '30');
    await run(page);
    const table = await page.evaluate(() => {
      const pre = document.querySelector<HTMLElement>('#table')!;
      const box = pre.getBoundingClientRect();
      // Where the last column's heading ends on screen, against the table's visible right edge.
      const text = pre.firstChild!;
      const at = text.textContent!.indexOf('retries during outage');
      const range = document.createRange();
      range.setStart(text, at);
      range.setEnd(text, at + 'retries during outage'.length);
      return { scroll: pre.scrollWidth, client: pre.clientWidth, headingRight: range.getBoundingClientRect().right, visibleRight: box.left + pre.clientLeft + pre.clientWidth, fontPx: parseFloat(getComputedStyle(pre).fontSize) };
    });
    expect(table.scroll).toBeLessThanOrEqual(table.client);
    expect(table.headingRight).toBeLessThanOrEqual(table.visibleRight);
    // Fitted, still readable.
    expect(table.fontPx).toBeGreaterThanOrEqual(10);
    await screenshot('lab-page-budget-table.png', '#table');
  }, 90_000);

  it('the layers chart draws both policies, as the table lists them', async () => {
    await page.selectOption('select[name=experiment]', 'layers');
    await page.fill('input[name=depth]', '3');
    await page.fill('input[name=attempts]', '3');
    await run(page);
    const layers = await read(page, 'layers-json');
    expect(layers.table).toBe(cli('layers', '--depth', '3', '--attempts', '3').trimEnd());
    expect(layers.layers).toEqual(
      expect.arrayContaining([
        'every layer retries, frontend: 3 calls',
        'every layer retries, backend: 9 calls',
        'every layer retries, db: 27 calls',
        'retry at one layer, frontend: 3 calls',
        'retry at one layer, backend: 3 calls',
        'retry at one layer, db: 3 calls',
      ]),
    );
    // Two colours of bars, and a legend that names both policies.
    const fills = await page.evaluate(() => [...new Set([...document.querySelectorAll('#chart-layers svg path[aria-label*=" calls"]')].map((e) => e.getAttribute('fill')))]);
    expect(fills).toHaveLength(2);
    const legend = await page.evaluate(() => [...document.querySelectorAll('#chart-layers svg .role-legend text')].map((e) => e.textContent));
    expect(legend).toEqual(expect.arrayContaining(['every layer retries', 'retry at one layer']));
    await screenshot('lab-page-layers-chart.png', '#chart-layers');
  }, 60_000);

  it('after a preset change and Cancel, no other experiment’s results show', async () => {
    // The layers results, shown.
    await page.selectOption('select[name=experiment]', 'layers');
    await run(page);
    expect(await page.isVisible('#chart-layers')).toBe(true);
    // The preset changes to the herd; its run starts and Cancel stops it. Run and Cancel are pressed
    // in one task, so the Cancel lands while the run is on however fast the machine is.
    await page.selectOption('select[name=experiment]', 'herd');
    await page.evaluate(() => {
      document.querySelector<HTMLButtonElement>('#run')!.click();
      document.querySelector<HTMLButtonElement>('#cancel')!.click();
    });
    expect(await page.evaluate(() => document.body.dataset.state)).toBe('cancelled');
    expect(await page.textContent('#status')).toMatch(/^cancelled at /);
    // Under the herd form: no layers table, command or chart, greyed or not.
    expect(await page.isVisible('#table')).toBe(false);
    expect(await page.isVisible('#chart-layers')).toBe(false);
    expect(await page.innerText('#results')).not.toContain('layers');
    expect(await page.isVisible('#no-results')).toBe(true);
    await screenshot('lab-page-cancelled.png');
    // Back to the layers preset: its own results show again, marked as from earlier inputs.
    await page.selectOption('select[name=experiment]', 'layers');
    expect(await page.isVisible('#chart-layers')).toBe(true);
    expect(await page.evaluate(() => document.body.dataset.stale)).toBe('true');
    // And the herd's next run shows the herd's results.
    await page.selectOption('select[name=experiment]', 'herd');
    await run(page);
    expect(await page.isVisible('#no-results')).toBe(false);
    expect((await read(page)).table).toContain('# scenario');
  }, 120_000);

  /** Checks exactly the boxes of `name` whose values are in `values`. */
  async function check(name: string, values: readonly string[]): Promise<void> {
    for (const box of await page.locator(`input[name=${name}]`).all()) await box.setChecked(values.includes((await box.getAttribute('value'))!));
  }

  /**
   * `actual` equals `expected` with every non-integer number within 1e-12 of it, relatively.
   * ECMAScript leaves Math.log, Math.exp and Math.cos implementation-approximated: this machine's
   * Node 20 (V8 11.3, fdlibm) and Chromium 156 differ in the last bit for 3–10% of arguments (the
   * browser's agree with CPython's libm). The hedging model's lognormal latencies go through them, so
   * its percentiles may differ in the 16th digit; counts, and what the table prints, do not.
   */
  function closeTo(actual: unknown, expected: unknown, path = 'json'): void {
    if (typeof expected === 'number' && !Number.isInteger(expected) && typeof actual === 'number') {
      expect(Math.abs(actual - expected), `${path}: ${actual} against ${expected}`).toBeLessThanOrEqual(1e-12 * Math.abs(expected));
    } else if (expected !== null && typeof expected === 'object') {
      expect(typeof actual, path).toBe('object');
      expect(Object.keys(actual as object).sort(), path).toEqual(Object.keys(expected).sort());
      for (const [k, v] of Object.entries(expected)) closeTo((actual as Record<string, unknown>)[k], v, `${path}.${k}`);
    } else {
      expect(actual, path).toEqual(expected);
    }
  }

  /** The charts shown fit their containers (no sideways scroll) and the page fits the window. */
  async function fits(width: number): Promise<void> {
    const fit = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      charts: [...document.querySelectorAll<HTMLElement>('.chart')].filter((c) => c.offsetParent !== null).map((c) => [c.id, c.scrollWidth, c.clientWidth] as const),
    }));
    expect(fit.page).toBeLessThanOrEqual(width);
    expect(fit.charts.length).toBeGreaterThan(0);
    for (const [id, scroll, client] of fit.charts) expect(scroll, id).toBeLessThanOrEqual(client);
  }

  /** Vega's `.3~r`: three significant digits, trailing zeros dropped. */
  const r3 = (x: number): string => String(Number(x.toPrecision(3)));

  it('hedging: clients, loads, delay and budget run to the CLI’s table and JSON, and the figure carries its numbers', async () => {
    await page.selectOption('select[name=experiment]', 'hedging');
    expect(await page.isVisible('input[name=delayMs]')).toBe(true);
    expect(await page.isVisible('input[name=seeds]')).toBe(false);
    await check('hedgingPolicies', ['no hedging', 'fixed delay', 'fixed delay + budget']);
    await page.fill('input[name=loads]', '90,10');
    await page.fill('input[name=durationS]', '5');
    await page.fill('input[name=hedgingSeeds]', '0');
    await run(page);
    const flags = ['--seeds', '0', '--loads', '10,90', '--policies', 'no hedging,fixed delay,fixed delay + budget', '--duration', '5'];
    const first = await read(page, 'hedging-json');
    expect(first.cli).toBe('npm run lab -- hedging --seeds 0 --loads 10,90 --policies "no hedging,fixed delay,fixed delay + budget" --duration 5');
    expect(first.table).toBe(cli('hedging', ...flags).trimEnd());
    const cliJson = JSON.parse(cli('hedging', ...flags, '--format', 'json'));
    closeTo(first.json, cliJson);
    // The figure's data, offered as a download, is `--figure-data`'s.
    const figure = await page.evaluate(() => decodeURIComponent(document.querySelector<HTMLAnchorElement>('#download-hedging-figure-csv')!.href.split(',').slice(1).join(',')));
    const cliFigure = cli('hedging', ...flags, '--figure-data');
    const cells = (csv: string) => csv.trimEnd().split('\n').map((line) => line.split(/,(?=[^,]*$)/));
    expect(cells(figure).map((c) => c[0])).toEqual(cells(cliFigure).map((c) => c[0]));
    closeTo(cells(figure).slice(1).map((c) => Number(c[1])), cells(cliFigure).slice(1).map((c) => Number(c[1])), 'figure');
    // At 10% load the fixed delay cuts the p99 (the experiment's point, seen through the page).
    const at = (load: number, policy: string) => cliJson.rows.find((r: { load: number; policy: string }) => r.load === load && r.policy === policy);
    expect(at(0.1, 'fixed delay').p99.mean).toBeLessThan(at(0.1, 'no hedging').p99.mean / 2);
    // The figure: a point per row and metric, labelled with the row's mean.
    for (const row of cliJson.rows as { policy: string; load: number; p99: { mean: number }; amplification: { mean: number } }[]) {
      expect(first.hedging).toContain(`${row.policy}, load ${Math.round(row.load * 100)}%: ${r3(row.p99.mean)}`);
      expect(first.hedging).toContain(`${row.policy}, load ${Math.round(row.load * 100)}%: ${r3(row.amplification.mean)}`);
    }

    // Another delay and budget: new numbers, still the CLI's.
    await page.fill('input[name=delayMs]', '20');
    await page.fill('input[name=budgetRatio]', '0.02');
    await run(page);
    const second = await read(page, 'hedging-json');
    expect(second.cli).toBe('npm run lab -- hedging --seeds 0 --loads 10,90 --policies "no hedging,fixed delay,fixed delay + budget" --delay 20 --budget-ratio 0.02 --duration 5');
    closeTo(second.json, JSON.parse(cli('hedging', ...flags, '--delay', '20', '--budget-ratio', '0.02', '--format', 'json')));
    expect(second.json.rows).not.toEqual(first.json.rows);

    await page.fill('input[name=loads]', '10,150');
    await refused(page, 'loads', 'each offered load (% of capacity) must be a number from 1 to 100 in plain decimal, got "150"');
    await page.fill('input[name=loads]', '10,90');
    await page.fill('input[name=budgetRatio]', '-1');
    await refused(page, 'budgetRatio', 'budget ratio must be a number from 0 to 1');
    await page.fill('input[name=budgetRatio]', '0.1');
    await fits(1280);
    await screenshot('lab-page-hedging.png', '#chart-hedging');
  }, 120_000);

  it('contention: strategies, client counts and seeds run to the CLI’s table and JSON, and both charts carry its means', async () => {
    await page.selectOption('select[name=experiment]', 'contention');
    await check('contentionStrategies', ['exponential', 'equal jitter', 'full jitter']);
    await page.fill('input[name=contentionClients]', '5,15');
    await page.fill('input[name=contentionSeeds]', '0-9');
    await run(page);
    const flags = ['--seeds', '0-9', '--clients', '5,15', '--strategies', 'exponential,equal jitter,full jitter'];
    const mine = await read(page, 'contention-json');
    expect(mine.cli).toBe('npm run lab -- contention --seeds 0-9 --clients 5,15 --strategies "exponential,equal jitter,full jitter"');
    expect(mine.table).toBe(cli('contention', ...flags).trimEnd());
    const cliJson = JSON.parse(cli('contention', ...flags, '--format', 'json'));
    expect(mine.json).toEqual(cliJson);
    expect(cliJson.rows).toHaveLength(6);
    for (const row of cliJson.rows as { clients: number; strategy: string; timeMs: { mean: number }; calls: { mean: number } }[]) {
      expect(mine.contention).toContain(`${row.strategy}, ${row.clients} clients: time ${row.timeMs.mean}`);
      expect(mine.contention).toContain(`${row.strategy}, ${row.clients} clients: calls ${row.calls.mean}`);
    }
    await page.fill('input[name=contentionClients]', '5,5');
    await refused(page, 'contentionClients', 'client counts: 5 is listed twice');
    await page.fill('input[name=contentionClients]', '5,15');
    await fits(1280);
    await screenshot('lab-page-contention.png', '#chart-contention');
  }, 120_000);

  it('metastable: the report’s table, then policies × servers and the trigger, run to the CLI’s table, JSON and trace; a trigger of its own through the scenario file', async () => {
    await page.selectOption('select[name=experiment]', 'metastable');
    // The preset: the report's table, which is no cross (its checkboxes hidden) and has no scenario file.
    expect(await page.isVisible('input[name=metastablePolicies]')).toBe(false);
    await page.fill('input[name=metastableSeeds]', '0-1');
    await run(page);
    const table = await read(page, 'metastable-json');
    expect(table.cli).toBe('npm run lab -- metastable --seeds 0-1');
    expect(table.table).toBe(cli('metastable', '--seeds', '0-1').trimEnd());
    expect(table.json).toEqual(JSON.parse(cli('metastable', '--seeds', '0-1', '--format', 'json')));
    expect(table.json.rows).toHaveLength(10);
    expect(table.scenario).toBeUndefined();
    // A trigger of its own needs a cross: refused beside the choice.
    await page.fill('input[name=triggerEndS]', '12');
    await refused(page, 'metastableTable', 'the report’s table runs with the default trigger, rate and timeout');
    await page.fill('input[name=triggerEndS]', '15');

    await page.selectOption('select[name=metastableTable]', 'cross');
    expect(await page.isVisible('input[name=metastablePolicies]')).toBe(true);
    const policies = ['3 retries', '3 retries + gRPC throttling'];
    await check('metastablePolicies', policies);
    await check('metastableServers', ['FIFO', 'drop expired']);
    await page.fill('input[name=metastableSeeds]', '0-1');
    await run(page);
    const flags = ['--policies', policies.join(','), '--servers', 'FIFO,drop expired'];
    const mine = await read(page, 'metastable-json');
    expect(mine.cli).toBe('npm run lab -- metastable --policies "3 retries,3 retries + gRPC throttling" --servers "FIFO,drop expired" --seeds 0-1');
    expect(mine.table).toBe(cli('metastable', ...flags, '--seeds', '0-1').trimEnd());
    const cliJson = JSON.parse(cli('metastable', ...flags, '--seeds', '0-1', '--format', 'json'));
    expect(mine.json).toEqual(cliJson);
    // Plain retries on a FIFO server stay down; the budget and dropping expired requests recover.
    expect(cliJson.rows.map((r: { policy: string; server: string; recovered: number }) => [r.policy, r.server, r.recovered])).toEqual([
      ['3 retries', 'FIFO', 0],
      ['3 retries + gRPC throttling', 'FIFO', 2],
      ['3 retries', 'drop expired', 2],
      ['3 retries + gRPC throttling', 'drop expired', 2],
    ]);
    // The figures' data, offered as a download, is seed 0's seconds as `--trace 0` prints them…
    const figure = await page.evaluate(() => decodeURIComponent(document.querySelector<HTMLAnchorElement>('#download-metastable-trace-csv')!.href.split(',').slice(1).join(',')));
    expect(figure).toBe(cli('metastable', ...flags, '--trace', '0'));
    expect(figure.trimEnd().split('\n')).toHaveLength(1 + 4 * 60);
    // …and the charts draw it: a line per combination and series (labelled by its first second), a queue line per combination.
    const trace = JSON.parse(cli('metastable', ...flags, '--trace', '0', '--format', 'json')).seconds as { policy: string; server: string; second: number; offered: number; goodput: number; wasted: number; queue: number }[];
    for (const s of trace.filter((x) => x.second === 0)) {
      const c = `${s.policy} · ${s.server} at 0 s:`;
      expect(mine.metastable).toContain(`${c} offered ${s.offered} per s`);
      expect(mine.metastable).toContain(`${c} goodput ${s.goodput} per s`);
      expect(mine.metastable).toContain(`${c} wasted ${s.wasted} per s`);
      expect(mine.queue).toContain(`${c} queue ${s.queue}`);
    }
    expect(mine.metastable.filter((l) => / at 0 s: (offered|goodput|wasted) \d+ per s$/.test(l))).toHaveLength(4 * 3);
    expect(mine.queue.filter((l) => / at 0 s: queue \d+$/.test(l))).toHaveLength(4);
    await fits(1280);
    await screenshot('lab-page-metastable.png', '#chart-metastable');

    // A spike of 3× from 10 s to 12 s: no flag says that, the scenario file does.
    await page.selectOption('select[name=triggerKind]', 'spike');
    expect(await page.inputValue('input[name=triggerFactor]')).toBe('2');
    await page.fill('input[name=triggerFactor]', '3');
    await page.fill('input[name=triggerEndS]', '12');
    await run(page);
    const spike = await read(page, 'metastable-json');
    expect(spike.cli).toBe('npm run lab -- metastable --config scenario.json --seeds 0-1');
    const file = join(tempDir('herdless-page-'), 'scenario.json');
    writeFileSync(file, spike.scenario!);
    expect(spike.table).toBe(cli('metastable', '--config', file, '--seeds', '0-1').trimEnd());
    expect(spike.json).toEqual(JSON.parse(cli('metastable', '--config', file, '--seeds', '0-1', '--format', 'json')));
    expect(spike.json.setup.trigger).toEqual({ kind: 'spike', startMs: 10_000, endMs: 12_000, factor: 3 });

    await page.fill('input[name=triggerFactor]', '0.5');
    await refused(page, 'triggerFactor', 'trigger.factor must be ≥ 1, got 0.5');
    await page.fill('input[name=triggerFactor]', '3');
    await page.fill('input[name=triggerEndS]', '58');
    await refused(page, 'triggerEndS', 'trigger.endMs must be ≤ 57000, got 58000');
    await page.fill('input[name=triggerEndS]', '12');
    await check('metastableServers', []);
    await refused(page, 'metastableServers', 'pick at least one server');
    await check('metastableServers', ['FIFO']);
  }, 180_000);

  it('metastable: the progress names the combination under way, and Cancel stops the run', async () => {
    await page.selectOption('select[name=experiment]', 'metastable');
    await page.selectOption('select[name=metastableTable]', 'cross');
    await page.selectOption('select[name=triggerKind]', 'capacity');
    await page.fill('input[name=triggerEndS]', '15');
    await check('metastablePolicies', await page.locator('input[name=metastablePolicies]').evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value)));
    await check('metastableServers', ['FIFO', 'LIFO', 'drop expired', 'shedding']);
    await page.fill('input[name=metastableSeeds]', '0-19'); // 28 combinations × 20 seeds: many seconds of work
    await page.evaluate(() => {
      const status = document.querySelector('#status')!;
      const seen: string[] = [];
      (window as unknown as { statuses: string[] }).statuses = seen;
      new MutationObserver(() => seen.push(status.textContent!)).observe(status, { childList: true, characterData: true, subtree: true });
    });
    await page.click('#run');
    const id = await page.evaluate(() => document.body.dataset.runId!);
    // The first combination done (1 of 28): the run has 27 more to go when Cancel is pressed.
    await page.waitForFunction((id) => document.body.dataset.runId === id && Number(document.body.dataset.progress) > 0, id, { timeout: 120_000 });
    await page.click('#cancel');
    expect(await page.evaluate(() => document.body.dataset.state)).toBe('cancelled');
    const statuses = (await page.evaluate(() => (window as unknown as { statuses: string[] }).statuses)).filter((s) => s.startsWith('running combination'));
    expect(statuses.slice(0, 2)).toEqual(['running combination 1 of 28: no retry · FIFO, seeds 0-19', 'running combination 2 of 28: 3 retries · FIFO, seeds 0-19']);
    expect(await page.textContent('#status')).toMatch(/^cancelled at combination \d+ of 28: .+ · .+, seeds 0-19; change an input or press Run to start again$/);
    expect(await page.evaluate(() => document.body.dataset.stale)).toBe('true');
    await page.fill('input[name=metastableSeeds]', '0-1');
    await check('metastableServers', ['FIFO']);
  }, 120_000);

  it('at 360 px the hedging, contention and metastable charts fit the screen', async () => {
    await page.setViewportSize({ width: 360, height: 800 });
    // Small runs of each (the form's values, whatever the tests before left in it).
    const small: Record<string, [string, string][]> = {
      hedging: [['loads', '10,90'], ['durationS', '5'], ['hedgingSeeds', '0']],
      contention: [['contentionSeeds', '0-9']],
      metastable: [['metastableSeeds', '0-1']],
    };
    for (const experiment of ['hedging', 'contention', 'metastable']) {
      await page.selectOption('select[name=experiment]', experiment);
      for (const [name, value] of small[experiment]!) await page.fill(`input[name=${name}]`, value);
      await run(page); // redrawn for the narrow screen
      await fits(360);
    }
    await page.setViewportSize({ width: 1280, height: 1400 });
  }, 180_000);

  it('logged no errors (a CSP violation or a failed load would show here)', () => {
    expect(problems).toEqual([]);
  });
});
