import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './temp.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../src/usage-error.js';
import { MANIFEST, checkReportDir, writeReport } from '../src/report/write.js';
import { pasted, pastedUntil } from './shell.js';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** Every file under `dir`, as `/`-separated relative paths, sorted. */
function tree(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? tree(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}

/** The ARIA labels of an SVG's marks, in document order. */
const labels = (svg: string): string[] => [...svg.matchAll(/aria-label="([^"]*)"/g)].map((m) => m[1]!);

const FILES = [
  '.herdless-report.json',
  'data/backoff-waits.csv',
  'data/backoff-waits.json',
  'data/budget-arrivals.csv',
  'data/budget-arrivals.json',
  'data/budget-tokens.csv',
  'data/budget-tokens.json',
  'data/budget.csv',
  'data/budget.json',
  'data/contention-means.csv',
  'data/contention-means.json',
  'data/contention.csv',
  'data/contention.json',
  'data/fleet-arrivals.csv',
  'data/fleet-arrivals.json',
  'data/fleet.csv',
  'data/fleet.json',
  'data/herd-arrivals.csv',
  'data/herd-arrivals.json',
  'data/herd-spread-arrivals.csv',
  'data/herd-spread-arrivals.json',
  'data/herd-spread.csv',
  'data/herd-spread.json',
  'data/herd-summary.csv',
  'data/herd-summary.json',
  'data/herd.csv',
  'data/herd.json',
  'data/layers.csv',
  'data/layers.json',
  'data/metastable-queue.csv',
  'data/metastable-queue.json',
  'data/metastable-seconds.csv',
  'data/metastable-seconds.json',
  'data/metastable.csv',
  'data/metastable.json',
  'figures/backoff-waits.narrow.svg',
  'figures/backoff-waits.svg',
  'figures/budget-arrivals.narrow.svg',
  'figures/budget-arrivals.svg',
  'figures/budget-tokens.narrow.svg',
  'figures/budget-tokens.svg',
  'figures/contention-means.narrow.svg',
  'figures/contention-means.svg',
  'figures/fleet-arrivals.narrow.svg',
  'figures/fleet-arrivals.svg',
  'figures/herd-arrivals.narrow.svg',
  'figures/herd-arrivals.svg',
  'figures/herd-spread-arrivals.narrow.svg',
  'figures/herd-spread-arrivals.svg',
  'figures/herd-summary.narrow.svg',
  'figures/herd-summary.svg',
  'figures/metastable-queue.narrow.svg',
  'figures/metastable-queue.svg',
  'figures/metastable-seconds.narrow.svg',
  'figures/metastable-seconds.svg',
  'index.html',
];

describe('npm run lab writes the report', () => {
  let cwd: string;
  let out: string;
  let first: { status: number | null; stdout: string; stderr: string };

  beforeAll(() => {
    cwd = tempDir('herdless-report-');
    out = join(cwd, 'lab-out');
    // The report's own command, as it says it was written (`Written by npm run lab`).
    const r = pasted('npm run lab', cwd);
    first = { status: r.status, stdout: r.stdout, stderr: r.stderr };
  });

  it('prints every table unchanged, then the report’s path; writes lab-out/ in the current folder and nothing else', () => {
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    const lines = first.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('# herd: 1000 clients, first sends spread over 0 s, seeds 0-19');
    expect(lines).toContain('full jitter     12.03 (  9.97- 14.10)       6148 (    6046-    6571)     1.1');
    expect(lines).toContain('# herd: 1000 clients, first sends spread over 0.9 s, seeds 0-19');
    expect(lines).toContain('fixed 1s        16.89 ( 15.58- 18.98)      11378 (   10514-   12236)    11.7');
    expect(lines).toContain('4 attempts                                   3.88x (3.87-3.89)     25.0           40.0 s (40-40)      74.3% (74.2-74.3)');
    expect(lines).toContain('4 attempts + shared gRPC throttling             1.00x (1.00-1.00)      0.0           15.0 s (15-15)       0.2% (0.1-0.3)');
    expect(lines).toContain('every layer retries          3         9   27');
    expect(lines.at(-2)).toBe('');
    expect(lines.at(-1)).toBe(`report: ${join(out, 'index.html')}`);
    expect(readdirSync(cwd)).toEqual(['lab-out']);
    expect(tree(out)).toEqual(FILES);
  });

  it('index.html has the tables, every figure with its explanation, the commands and seeds, and links that resolve', () => {
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    expect(html).toContain('decorrelated    12.86 ( 10.41- 15.20)       8151 (    7404-    8500)     2.9');
    expect(html).toContain('Written by <code>npm run lab</code>');
    expect(html).toContain('Command: <code>npm run lab -- herd --spread 0.9</code> · seeds 0-19');
    for (const id of ['herd-arrivals', 'backoff-waits', 'herd-summary', 'herd-spread-arrivals', 'budget-tokens', 'budget-arrivals', 'fleet-arrivals']) {
      expect(html).toContain(`<figure id="${id}">`);
      expect(html).toContain(`<img src="figures/${id}.svg"`);
    }
    expect(html).toContain('the last client succeeds at 16.2 s'); // the article: fixed 1 s, spread, seed 0
    for (const [, href] of html.matchAll(/(?:href|src)="([^"#][^"]*)"/g)) expect(existsSync(join(out, href!)), href).toBe(true);
  });

  it('figure 1: without jitter every return is one bar of 1000; full jitter from 2 s on stays near the capacity line', () => {
    const svg = readFileSync(join(out, 'figures/herd-arrivals.svg'), 'utf8');
    const bars = labels(svg)
      .map((l) => /^(.+) at ([\d.]+)-([\d.]+) s: (\d+) arrivals$/.exec(l))
      .filter((m) => m !== null)
      .map((m) => ({ series: m[1]!, t: Number(m[2]), arrivals: Number(m[4]) }));
    const wall = bars.filter((b) => b.series === 'exponential');
    expect(wall.map((b) => b.t)).toEqual([0, 0.2, 0.6, 1.4, 3, 6.2, 12.6, 22.6]);
    expect(wall.every((b) => b.arrivals === 1000)).toBe(true);
    const jitter = bars.filter((b) => b.series === 'full jitter');
    expect(jitter.length).toBeGreaterThan(50);
    expect(Math.max(...jitter.filter((b) => b.t >= 2).map((b) => b.arrivals))).toBeLessThanOrEqual(100); // ≤ 2 × capacity
    expect(svg).toContain('capacity: 50 per 100 ms');
    // The figure's data file holds the same bins; seed 0 of full jitter sends 6055 requests.
    const rows = JSON.parse(readFileSync(join(out, 'data/herd-arrivals.json'), 'utf8')) as { series: string; arrivals: number }[];
    expect(rows.filter((r) => r.series === 'full jitter').reduce((n, r) => n + r.arrivals, 0)).toBe(6055);
    expect(rows.filter((r) => r.series === 'exponential').reduce((n, r) => n + r.arrivals, 0)).toBe(17000);
  });

  it('figure 2: 40 clients × 10 failure counts per jitter, drawn by the backoff objects, and the dashed no-jitter line', () => {
    const svg = readFileSync(join(out, 'figures/backoff-waits.svg'), 'utf8');
    const points = labels(svg).filter((l) => /, client \d+, failure \d+: wait /.test(l));
    expect(points).toHaveLength(3 * 40 * 10);
    // PyRandom(0).random() = 0.8444218515250481: full jitter's first wait is uniform(0, 200 ms).
    expect(points[0]).toBe(`full jitter, client 0, failure 1: wait ${(0.8444218515250481 * 200) / 1000} s`);
    expect(labels(svg).filter((l) => l === 'the wait without jitter')).toHaveLength(3);
    const rows = JSON.parse(readFileSync(join(out, 'data/backoff-waits.json'), 'utf8')) as { strategy: string; waitS: number; noJitterS: number; failure: number }[];
    expect([...new Set(rows.map((r) => r.noJitterS))]).toEqual([0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 10]);
    for (const r of rows.filter((x) => x.strategy === 'equal jitter')) expect(r.waitS).toBeGreaterThanOrEqual(r.noJitterS / 2);
    for (const r of rows.filter((x) => x.strategy === 'full jitter')) expect(r.waitS).toBeLessThan(r.noJitterS);
  });

  it('every figure has a narrow copy that fits a 360 px screen, chosen by the page below 640 px', () => {
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    for (const file of FILES.filter((f) => f.endsWith('.narrow.svg'))) {
      const svg = readFileSync(join(out, file), 'utf8');
      const width = Number(/^<svg[^>]* width="([\d.]+)"/.exec(svg)![1]);
      expect(width, file).toBeLessThanOrEqual(340);
      expect(width, file).toBeGreaterThan(250);
      expect(html).toContain(`<source media="(max-width: 640px)" srcset="${file}">`);
      // The same marks as the wide figure: only the layout differs.
      expect(labels(svg).filter((l) => !/axis/i.test(l)).length, file).toBe(labels(readFileSync(join(out, file.replace('.narrow', '')), 'utf8')).filter((l) => !/axis/i.test(l)).length);
    }
  });

  it('figure 3: mean and range per strategy from the table', () => {
    const svg = readFileSync(join(out, 'figures/herd-summary.svg'), 'utf8');
    expect(labels(svg)).toContain('full jitter: finish s mean 12.030499999999998, min 9.97, max 14.1');
    expect(labels(svg)).toContain('immediate: requests mean 12000000, min 12000000, max 12000000');
    expect(svg).toContain('not finished by 120 s');
  });

  it('figure 4: with the spread, fixed 1 s finishes at 16.2 s and exponential keeps returning as a block', () => {
    const rows = JSON.parse(readFileSync(join(out, 'data/herd-spread-arrivals.json'), 'utf8')) as { series: string; t2: number; arrivals: number }[];
    expect(Math.max(...rows.filter((r) => r.series === 'fixed 1s').map((r) => r.t2))).toBe(16.2);
    const svg = readFileSync(join(out, 'figures/herd-spread-arrivals.svg'), 'utf8');
    expect(labels(svg)).toContain('fixed 1s at 0-0.1 s: 126 arrivals');
    expect(labels(svg).filter((l) => l.startsWith('exponential at 22.')).length).toBeGreaterThan(0);
  });

  it('the data files match the CLI’s JSON and CSV', () => {
    const json = JSON.parse(readFileSync(join(out, 'data/herd.json'), 'utf8'));
    const cli = spawnSync(process.execPath, [main, 'herd', '--format', 'json', '--per-seed', '--strategies', 'full jitter', '--seeds', '0-19'], { encoding: 'utf8' });
    const expected = JSON.parse(cli.stdout);
    expect(json.rows[3]).toEqual(expected.rows[0]);
    expect(json.runs.filter((r: { strategy: string }) => r.strategy === 'full jitter')).toEqual(expected.runs);
    expect(readFileSync(join(out, 'data/herd.csv'), 'utf8').split('\n')[4]).toMatch(/^full jitter,12\.03\d*,9\.97,14\.1,6148\.05,6046,6571,1\.15,/);
  });

  it('the budget figures: client 0 throttled during the outage; 4 attempts ~3.9× the new requests', () => {
    const tokens = JSON.parse(readFileSync(join(out, 'data/budget-tokens.json'), 'utf8')) as { t: number; tokens: number }[];
    expect(tokens).toHaveLength(4000);
    expect(Math.max(...tokens.filter((p) => p.t >= 6 && p.t < 15).map((p) => p.tokens))).toBeLessThanOrEqual(5);
    const perSecond = JSON.parse(readFileSync(join(out, 'data/budget-arrivals.json'), 'utf8')) as { policy: string; second: number; arrivals: number; fresh: number }[];
    const outage = perSecond.filter((p) => p.policy === '4 attempts' && p.second >= 5 && p.second < 15);
    const load = outage.reduce((a, p) => a + p.arrivals, 0) / outage.reduce((a, p) => a + p.fresh, 0);
    expect(load).toBeGreaterThan(3.8);
    expect(load).toBeLessThan(4);
    // One y scale for all seven panels, an x-axis title, and the crash threshold on every panel.
    const svg = readFileSync(join(out, 'figures/budget-arrivals.svg'), 'utf8');
    const yAxes = [...svg.matchAll(/aria-label="(Y-axis[^"]*)"/g)].map((m) => m[1]);
    expect(yAxes).toHaveLength(7);
    expect(new Set(yAxes)).toEqual(new Set(["Y-axis titled 'arrivals per s' for a linear scale with values from 0 to 1,400"]));
    expect(svg).toContain("X-axis titled 'time (s); the outage shaded'");
    expect(labels(svg).filter((l) => l === 'crash threshold: about 1000 arrivals per s')).toHaveLength(7);
    const layers = JSON.parse(readFileSync(join(out, 'data/layers.json'), 'utf8'));
    expect(layers.rows[0].calls).toEqual({ frontend: 3, backend: 9, db: 27 });
  });

  it('every command the report shows runs as pasted into bash and prints its table or its figure’s data', async () => {
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    const unescape = (s: string): string => s.replace(/&(amp|lt|gt|quot|#39);/g, (_m, c: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[c]!);
    const sections = [...html.matchAll(/<section id="([^"]+)">[\s\S]*?Command: <code>([^<]*)<\/code>[\s\S]*?<pre>([^<]*)<\/pre>/g)].map((m) => ({ id: m[1]!, command: unescape(m[2]!), table: unescape(m[3]!) }));
    const figures = [...html.matchAll(/<figure id="([^"]+)">[\s\S]*?Data: <code>([^<]*)<\/code>/g)].map((m) => ({ id: m[1]!, command: unescape(m[2]!) }));
    const all = [...html.matchAll(/<code>([^<]*)<\/code>/g)].map((m) => unescape(m[1]!));
    expect(sections.map((s) => s.id)).toEqual(['herd', 'herd-spread', 'contention', 'budget', 'fleet', 'layers', 'metastable']);
    expect(figures).toHaveLength(10);
    // Nothing else is shown as a command: the report's own (run above) and the page's.
    expect(all.filter((c) => !sections.some((s) => s.command === c) && !figures.some((f) => f.command === c))).toEqual(['npm run lab', 'npm run lab -- serve']);
    expect(first.status).toBe(0);

    const dir = tempDir('herdless-pasted-');
    const run = (command: string): string => {
      const r = pasted(command, dir);
      expect({ command, status: r.status, stderr: r.stderr }).toEqual({ command, status: 0, stderr: '' });
      return r.stdout;
    };
    for (const s of sections) expect(run(s.command), s.command).toContain(s.table);
    const data = (id: string, ext: 'csv' | 'json'): string => readFileSync(join(out, `data/${id}.${ext}`), 'utf8');
    for (const f of figures) {
      const printed = run(f.command);
      if (f.id === 'budget-tokens') {
        const rows = JSON.parse(data(f.id, 'json')) as { t: number; tokens: number }[];
        const lines = printed.trimEnd().split('\n');
        expect(lines[0]).toBe('tick,time_s,tokens');
        expect(lines.slice(1).map((l) => { const [, t, tokens] = l.split(','); return { t: Number(t), tokens: Number(tokens) }; })).toEqual(rows);
      } else if (f.id === 'budget-arrivals' || f.id === 'fleet-arrivals') {
        const rows = JSON.parse(data(f.id, 'json')) as { policy: string; second: number; arrivals: number; fresh: number }[];
        const lines = printed.trimEnd().split('\n');
        expect(lines[0]).toBe('policy,second,new,arrivals,successes,retries');
        const parsed = lines.slice(1).map((l) => { const m = /^"(.*)",(\d+),(\d+),(\d+),\d+,\d+$/.exec(l)!; return { policy: m[1]!, second: Number(m[2]), arrivals: Number(m[4]), fresh: Number(m[3]) }; });
        expect(parsed).toEqual(rows);
      } else if (f.id === 'contention-means') {
        expect(printed).toBe(data('contention', 'csv')); // the means the figure draws, as the table's CSV (2 decimals)
      } else if (f.id === 'metastable-seconds' || f.id === 'metastable-queue') {
        // The per-second trace of seed 0: the figure's rows are columns of it.
        const lines = printed.trimEnd().split('\n');
        expect(lines[0]).toBe('policy,server,second,fresh,offered,goodput,queue,wasted,shed');
        const trace = lines.slice(1).map((l) => {
          const [policy, server, ...n] = l.split(',');
          const [second, fresh, offered, goodput, queue, wasted] = n.map(Number);
          return { combination: `${policy} · ${server}`, second, fresh, offered, goodput, queue, wasted };
        });
        const rows = JSON.parse(data(f.id, 'json')) as Record<string, unknown>[];
        expect(rows).toEqual(trace.map((t) => (f.id === 'metastable-queue' ? { combination: t.combination, second: t.second, queue: t.queue } : { combination: t.combination, second: t.second, fresh: t.fresh, offered: t.offered, goodput: t.goodput, wasted: t.wasted })));
      } else if (f.id === 'herd-summary') {
        expect(printed).toBe(data('herd', 'csv')); // the table the summary draws, as the report's data file
      } else {
        expect(printed, f.command).toBe(data(f.id, 'csv')); // the very rows of the figure's data file
      }
    }
    // The page: it serves, and Ctrl+C stops it.
    const page = await pastedUntil('npm run lab -- serve', dir, /lab page: (http:\S+)/, async (output) => {
      const url = /lab page: (http:\S+)/.exec(output)![1]!;
      expect((await fetch(url)).status).toBe(200);
    });
    expect(page).toContain('stopped (SIGINT)');
  }, 600_000);

  it('a second run overwrites cleanly', () => {
    writeFileSync(join(out, 'figures/herd-arrivals.svg'), 'stale');
    const r = spawnSync(process.execPath, [main, '--out', 'lab-out'], { cwd, encoding: 'utf8', timeout: 300_000 });
    expect(r.status).toBe(0);
    expect(tree(out)).toEqual(FILES);
    expect(readFileSync(join(out, 'figures/herd-arrivals.svg'), 'utf8')).toMatch(/^<svg /);
    expect(readdirSync(cwd)).toEqual(['lab-out']);
    expect(readFileSync(join(out, 'index.html'), 'utf8')).toContain('Written by <code>npm run lab -- --out lab-out</code>');
  });
});

describe('writeReport', () => {
  const fresh = () => tempDir('herdless-write-');

  it('removes the files of the previous report, keeps nothing stale, and writes a manifest', () => {
    const dir = join(fresh(), 'out');
    writeReport(dir, [
      { path: 'index.html', content: 'one' },
      { path: 'figures/old.svg', content: '<svg/>' },
      { path: 'deep/er/x.csv', content: 'a' },
    ]);
    expect(tree(dir)).toEqual([MANIFEST, 'deep/er/x.csv', 'figures/old.svg', 'index.html']);
    const index = writeReport(dir, [
      { path: 'index.html', content: 'two' },
      { path: 'figures/new.svg', content: '<svg/>' },
    ]);
    expect(index).toBe(join(dir, 'index.html'));
    expect(tree(dir)).toEqual([MANIFEST, 'figures/new.svg', 'index.html']);
    expect(readFileSync(index, 'utf8')).toBe('two');
    expect(JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8'))).toEqual(['index.html', 'figures/new.svg']);
  });

  it('keeps files the user added to the report folder', () => {
    const dir = fresh();
    writeReport(dir, [{ path: 'index.html', content: 'one' }]);
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    writeReport(dir, [{ path: 'index.html', content: 'two' }]);
    expect(tree(dir)).toEqual([MANIFEST, 'index.html', 'notes.txt']);
  });

  it.each([
    ['a folder of other files', (d: string) => (writeFileSync(join(d, 'thesis.tex'), 'x'), d), 'the folder has files the lab did not write'],
    ['a file', (d: string) => (writeFileSync(join(d, 'f'), 'x'), join(d, 'f')), 'is a file, not a folder'],
  ])('refuses %s', (_name, make, message) => {
    const dir = make(fresh());
    expect(() => writeReport(dir, [{ path: 'index.html', content: 'x' }])).toThrow(`--out ${JSON.stringify(dir)}: ${message}`);
  });

  it('never follows a manifest or a file path out of the folder', () => {
    const parent = fresh();
    const dir = join(parent, 'out');
    mkdirSync(dir);
    writeFileSync(join(parent, 'precious.txt'), 'keep');
    writeFileSync(join(dir, MANIFEST), JSON.stringify(['../precious.txt', '/etc/hostname', 'index.html']));
    writeReport(dir, [{ path: 'index.html', content: 'x' }]);
    expect(readFileSync(join(parent, 'precious.txt'), 'utf8')).toBe('keep');
    expect(() => writeReport(dir, [{ path: '../escape.html', content: 'x' }])).toThrow('bad file path');
    expect(existsSync(join(parent, 'escape.html'))).toBe(false);
  });

  /** Every file under `dir` with its content: what "untouched" compares. */
  const snapshot = (dir: string) => tree(dir).map((p) => [p, readFileSync(join(dir, p), 'utf8')]);

  /** A folder outside the report holding a user's files, and a report folder with `plant` in it. */
  const attack = (plant: (out: string, victim: string) => void) => {
    const parent = fresh();
    const victim = join(parent, 'victim');
    mkdirSync(victim);
    writeFileSync(join(victim, 'herd.json'), 'mine');
    writeFileSync(join(victim, 'budget.csv'), 'mine too');
    const out = join(parent, 'out');
    mkdirSync(out);
    plant(out, victim);
    return { out, victim, before: snapshot(victim) };
  };

  const refusal = (run: () => unknown): string => {
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      const message = (error as Error).message;
      expect(message).not.toContain('\n');
      return message;
    }
    throw new Error('not refused');
  };

  it('a planted manifest and a `data` link to another folder: nothing there deleted or written, one line', () => {
    const { out, victim, before } = attack((o, v) => {
      writeFileSync(join(o, MANIFEST), JSON.stringify(['index.html', 'data/herd.json', 'data/budget.csv']));
      symlinkSync(v, join(o, 'data'));
    });
    const files = [
      { path: 'index.html', content: 'x' },
      { path: 'data/herd.json', content: 'overwritten' },
    ];
    expect(refusal(() => checkReportDir(out))).toBe(`--out ${JSON.stringify(out)}: data is a symbolic link the lab did not make; it follows none — remove it or choose a new folder`);
    expect(refusal(() => writeReport(out, files))).toContain('data is a symbolic link');
    expect(snapshot(victim)).toEqual(before);
    expect(lstatSync(join(out, 'data')).isSymbolicLink()).toBe(true); // the user's link is kept too
  });

  it.each([
    ['the output folder is itself a link', (o: string, v: string) => symlinkSync(v, join(o, 'dir')), 'dir', 'is a symbolic link; give the folder itself'],
    ['the manifest is a link', (o: string, v: string) => symlinkSync(join(v, 'herd.json'), join(o, MANIFEST)), '', `its ${MANIFEST} is a symbolic link, so the folder is not a report the lab wrote`],
    ['the manifest is not JSON', (o: string) => writeFileSync(join(o, MANIFEST), '{'), '', `its ${MANIFEST} is not JSON`],
    ['the manifest is not a list of names', (o: string) => writeFileSync(join(o, MANIFEST), '{"a":1}'), '', 'is not a list of file names'],
    [
      'a listed file is a link out',
      (o: string, v: string) => (writeFileSync(join(o, MANIFEST), '["index.html"]'), symlinkSync(join(v, 'herd.json'), join(o, 'index.html'))),
      '',
      'index.html is a symbolic link the lab did not make',
    ],
  ])('refuses when %s, touching nothing', (_name, plant, sub, message) => {
    const { out, victim, before } = attack(plant);
    const dir = sub === '' ? out : join(out, sub);
    const inside = snapshotLinks(out);
    expect(refusal(() => writeReport(dir, [{ path: 'index.html', content: 'x' }]))).toContain(message);
    expect(snapshot(victim)).toEqual(before);
    expect(snapshotLinks(out)).toEqual(inside);
  });

  it('refuses to overwrite a file its manifest does not list, and keeps it', () => {
    const dir = fresh();
    writeReport(dir, [{ path: 'index.html', content: 'one' }]);
    mkdirSync(join(dir, 'data'));
    writeFileSync(join(dir, 'data', 'herd.json'), 'mine');
    expect(refusal(() => writeReport(dir, [{ path: 'index.html', content: 'two' }, { path: 'data/herd.json', content: 'x' }]))).toBe(
      `--out ${JSON.stringify(dir)}: data/herd.json is there and the lab did not write it; move it away or choose a new folder`,
    );
    expect(readFileSync(join(dir, 'data', 'herd.json'), 'utf8')).toBe('mine');
    expect(readFileSync(join(dir, 'index.html'), 'utf8')).toBe('one'); // refused before removing anything
  });

  it('a folder where the report writes a file is refused, not emptied', () => {
    const dir = fresh();
    writeReport(dir, [{ path: 'index.html', content: 'one' }]);
    mkdirSync(join(dir, 'figures'));
    mkdirSync(join(dir, 'figures', 'a.svg'));
    writeFileSync(join(dir, 'figures', 'a.svg', 'keep'), 'k');
    expect(refusal(() => writeReport(dir, [{ path: 'figures/a.svg', content: '<svg/>' }]))).toContain('figures/a.svg is a folder where the report writes figures/a.svg');
    expect(readFileSync(join(dir, 'figures', 'a.svg', 'keep'), 'utf8')).toBe('k');
  });
});

/** Every entry under `dir`, links listed (not followed), with what they point at. */
function snapshotLinks(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => {
      const path = `${prefix}${e.name}`;
      if (e.isSymbolicLink()) return [`${path} -> link`];
      if (e.isDirectory()) return snapshotLinks(join(dir, e.name), `${path}/`);
      return [`${path}: ${readFileSync(join(dir, e.name), 'utf8')}`];
    })
    .sort();
}
