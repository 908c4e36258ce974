import { spawnSync } from 'node:child_process';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { tempDir } from './temp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from './lab-server.js';

/*
 * The lab page in a real browser: Debian's chromium driven by playwright-core (no browser download).
 * `.ci/run` installs chromium when it is missing; on a developer machine without it the test is
 * skipped with a note, but under CI=true a missing browser is a failure.
 */

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && !process.env.CI) console.warn(`page.browser.test: skipped, ${CHROMIUM} is missing (apt-get install chromium)`);

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const cli = (...args: string[]): string => {
  const r = spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`herdless-lab ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

/** The page's state after its latest run: the table, the JSON download, and the charts' mark labels. */
async function read(page: Page) {
  return page.evaluate(async () => {
    const href = document.querySelector<HTMLAnchorElement>('#download-herd-json')!.href;
    const labels = (sel: string) => [...document.querySelectorAll(`${sel} svg [aria-label]`)].map((e) => e.getAttribute('aria-label')!);
    return {
      table: document.querySelector('#table')!.textContent!,
      json: JSON.parse(decodeURIComponent(href.slice(href.indexOf(',') + 1))),
      scenario: decodeURIComponent(document.querySelector<HTMLAnchorElement>('#download-scenario-json')!.href.split(',').slice(1).join(',')),
      cli: document.querySelector('#cli')!.textContent!,
      arrivals: labels('#chart-arrivals'),
      seeds: labels('#chart-seeds'),
    };
  });
}

/** Waits until the page has finished a run whose table contains `text`. */
async function settled(page: Page, text: string): Promise<void> {
  await page.waitForFunction((t) => document.body.dataset.state === 'done' && document.querySelector('#table')!.textContent!.includes(t), text, { timeout: 30_000 });
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
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    if (server && server.child.exitCode === null) await server.stop();
  });

  it('switching exponential → full jitter updates the table and the charts to the CLI’s numbers', async () => {
    await page.goto(server.url);
    await settled(page, 'exponential');
    await page.fill('input[name=seeds]', '0-1');
    await settled(page, 'seeds 0-1\n');
    const before = await read(page);
    expect(before.table).toContain('exponential    120.00 (120.00-120.00)      17000 (   17000-   17000)    14.0 (2 unfinished)');
    expect(bars(before.arrivals).every((b) => b.series === 'exponential' && b.arrivals === 1000)).toBe(true);

    await page.selectOption('select[name=strategy]', 'full jitter');
    await settled(page, 'full jitter');
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
    // The charts: each seed's bars carry the CLI's finish time and requests…
    for (const run of cliJson.runs as { seed: number; finish: number; requests: number }[]) {
      expect(after.seeds).toContain(`full jitter seed ${run.seed}: finishS ${run.finish}`);
      expect(after.seeds).toContain(`full jitter seed ${run.seed}: requests ${run.requests}`);
    }
    // …and seed 0's arrivals add up to its requests, no longer one bar of 1000 per return.
    const arrivals = bars(after.arrivals);
    expect(arrivals.every((b) => b.series === 'full jitter')).toBe(true);
    expect(arrivals.reduce((n, b) => n + b.arrivals, 0)).toBe(cliJson.runs[0].requests);
    expect(arrivals.length).toBeGreaterThan(50);

    // The scenario file the page offers runs to the same numbers through --config.
    const file = join(tempDir('herdless-page-'), 'scenario.json');
    writeFileSync(file, after.scenario);
    expect(JSON.parse(cli('herd', '--config', file, '--format', 'json')).rows).toEqual(cliJson.rows);

    const shot = join(process.env.HERDLESS_SCREENSHOT_DIR ?? tempDir('herdless-shot-'), 'lab-page.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(20_000);
    console.log(`lab page screenshot: ${shot}`);
  }, 90_000);

  it('an invalid value shows an inline message naming the field, and runs nothing', async () => {
    await page.fill('input[name=capacity]', '-1');
    await page.waitForFunction(() => document.body.dataset.state === 'invalid', undefined, { timeout: 10_000 });
    expect(await page.textContent('[data-error-for=capacity]')).toBe('server.capacityPerTick must be ≥ 0, got -1');
    expect(await page.getAttribute('[data-input=capacity]', 'class')).toContain('invalid');
    await page.fill('input[name=capacity]', '5');
    await settled(page, 'full jitter');
    expect(await page.textContent('[data-error-for=capacity]')).toBe('');
    await page.fill('input[name="param:maxBackoffMs"]', '-3');
    await page.waitForFunction(() => document.body.dataset.state === 'invalid', undefined, { timeout: 10_000 });
    expect(await page.textContent('[data-error-for="param:maxBackoffMs"]')).toBe('policies[0].backoff.maxBackoffMs must be ≥ 0, got -3');
    expect(await page.inputValue('select[name=strategy]')).toBe('custom');
  }, 30_000);

  it('a custom backoff runs too: table, charts, command and scenario file all follow it', async () => {
    await page.fill('input[name="param:maxBackoffMs"]', '10000');
    await page.fill('input[name="param:initialBackoffMs"]', '50');
    await page.waitForFunction(() => document.body.dataset.state === 'done', undefined, { timeout: 30_000 });
    const custom = await read(page);
    expect(custom.cli).toBe('npm run lab -- herd --config scenario.json --seeds 0-1');
    const scenario = JSON.parse(custom.scenario);
    expect(scenario.policies[0].backoff.initialBackoffMs).toBe(50);
    const file = join(tempDir('herdless-page-'), 'scenario.json');
    writeFileSync(file, custom.scenario);
    const viaCli = JSON.parse(cli('herd', '--config', file, '--format', 'json', '--per-seed'));
    expect(custom.json.rows).toEqual(viaCli.rows);
    // The charts were redrawn for the custom policy: seed 0's arrivals add up to its requests.
    expect(bars(custom.arrivals).reduce((n, b) => n + b.arrivals, 0)).toBe(viaCli.runs[0].requests);
  }, 60_000);

  it('logged no errors (a CSP violation or a failed load would show here)', () => {
    expect(problems).toEqual([]);
  });
});
