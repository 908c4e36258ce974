import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './temp.js';
import { describe, expect, it } from 'vitest';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const lab = (...args: string[]) => {
  const r = spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 300_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

/** Writes a scenario file: the article's server and a 1,000-client herd for 120 s, with `fields` over them. */
const scenarioFile = (fields: Record<string, unknown>): string => {
  const file = join(tempDir('herdless-'), 'scenario.json');
  const server = { tickMs: 10, capacityPerTick: 5, crashWindowTicks: 10, crashLimit: 100, restartMs: 1000, startupMs: 1000 };
  writeFileSync(file, JSON.stringify({ clients: 1000, arrivals: { kind: 'together', spreadMs: 0 }, server, horizonMs: 120_000, ...fields }));
  return file;
};

/** Writes `json` to a new file and returns its path. */
const jsonFile = (json: unknown): string => {
  const file = join(tempDir('herdless-'), 'scenario.json');
  writeFileSync(file, JSON.stringify(json));
  return file;
};

describe('herdless-lab --help', () => {
  it('lists the commands and says that `all` runs without one, with its options (--out)', () => {
    const r = lab('--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^ {2}herd \[options\]/m);
    expect(r.stdout).toContain('Without a command it runs `all`, which takes its options too: e.g. `herdless-lab --out report`');
  });

  it('waits --help offers the formats waits prints, csv and json, not table', () => {
    const r = lab('help', 'waits');
    expect(r.status).toBe(0);
    const format = r.stdout.slice(r.stdout.indexOf('--format'), r.stdout.indexOf('-h, --help'));
    expect(format.replace(/\s+/g, ' ').trim()).toBe('--format <format> output format: csv or json (default: "csv")');
  });

  it('shows a default typed as text (a port, a count, a seed, a seed list, a folder) as one would type it, not as a JSON string', () => {
    const texts = new Map<string, string>();
    /** `command`'s help on one line (each command's asked once). */
    const helpText = (command: string[]): string => {
      const key = command.join(' ');
      if (!texts.has(key)) texts.set(key, lab(...command, '--help').stdout.replace(/\s+/g, ' '));
      return texts.get(key)!;
    };
    /** `--flag <arg> description (default: …)` of `command`'s help. */
    const help = (command: string[], flag: string): string => {
      const text = helpText(command);
      return text.slice(text.indexOf(`${flag} <`), text.indexOf(')', text.indexOf('(default:', text.indexOf(`${flag} <`))) + 1);
    };
    expect(help(['live', 'metastable'], '--seeds')).toBe("--seeds <n> the seed of the live runs' arrivals, jitter and service times: one seed (default: 0)");
    expect(help(['live', 'metastable'], '--sim-seeds')).toMatch(/\(default: 0-19\)$/);
    expect(help(['live', 'herd'], '--seeds')).toMatch(/one seed \(default: 0\)$/);
    expect(help(['live', 'budget'], '--sim-seeds')).toMatch(/\(default: 0-19\)$/);
    expect(help(['server'], '--port')).toBe('--port <n> the port (0 = any free port, printed) (default: 0)');
    expect(help(['serve'], '--port')).toMatch(/\(default: 8000\)$/);
    expect(help(['layers'], '--depth')).toMatch(/\(default: 3\)$/);
    expect(help(['layers'], '--attempts')).toMatch(/\(default: 3\)$/);
    expect(help(['herd'], '--seeds')).toBe('--seeds <list> seeds, as ranges and lists: 0-19, 1,5,9 (default: 0-19)');
    expect(help(['all'], '--out')).toMatch(/\(default: lab-out\)$/);
    // Only a choice among words keeps commander's quotes, as its list of choices has them.
    for (const command of [['all'], ['herd'], ['layers'], ['server'], ['serve'], ['live', 'herd'], ['live', 'budget'], ['live', 'metastable']]) {
      expect(helpText(command), command.join(' ')).not.toMatch(/default: "(?!table"|csv"|article")/);
    }
  });
});

describe('herdless-lab herd', () => {
  it('--format json follows the contract', () => {
    const r = lab('herd', '--strategies', 'full jitter,exponential', '--seeds', '0-19', '--format', 'json');
    expect(r.status).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(Object.keys(json)).toEqual(['schemaVersion', 'experiment', 'spread', 'seeds', 'rows']);
    expect(json.experiment).toBe('herd');
    expect(json.spread).toBe(0);
    expect(json.seeds).toEqual([...Array(20).keys()]);
    expect(json.rows[0].strategy).toBe('full jitter');
    expect(json.rows[0].finish.mean).toBeCloseTo(12.0305, 10);
    expect(json.rows[0].requests).toEqual({ mean: 6148.05, min: 6046, max: 6571 });
    expect(json.rows[0].crashes.mean).toBe(1.15);
    expect(json.rows[0].unfinished).toBe(0);
    expect(json.rows[1]).toEqual({
      strategy: 'exponential',
      finish: { mean: 120, min: 120, max: 120 },
      requests: { mean: 17000, min: 17000, max: 17000 },
      crashes: { mean: 14, min: 14, max: 14 },
      unfinished: 20,
      gaveUp: { mean: 0, min: 0, max: 0 },
    });
  });

  it('--spread 0.9 gives the article’s variant', () => {
    const r = lab('herd', '--spread', '0.9', '--strategies', 'fixed 1s', '--format', 'json', '--workers', '0');
    const row = JSON.parse(r.stdout).rows[0];
    expect(JSON.parse(r.stdout).spread).toBe(0.9);
    expect(row.unfinished).toBe(0);
    expect(row.crashes.mean).toBe(11.65);
    expect(row.finish.mean.toFixed(2)).toBe('16.89');
  });

  it('numeric flags take plain decimals: --spread .5 is 0.5 s', () => {
    const r = lab('herd', '--spread', '.5', '--strategies', 'full jitter', '--seeds', '0', '--format', 'json', '--workers', '0');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).spread).toBe(0.5);
  });

  it('prints the table in the article’s layout, and every run with --per-seed', () => {
    const r = lab('herd', '--strategies', 'full jitter', '--seeds', '0-1', '--per-seed');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('full jitter seed 0: finish 10.50 requests 6055 crashes 1\nfull jitter seed 1: finish 11.13 requests 6061 crashes 1\n');
    // The title first, then the table, then every run.
    expect(r.stdout.indexOf('# herd:')).toBe(0);
    expect(r.stdout.indexOf('full jitter seed 0')).toBeGreaterThan(r.stdout.indexOf('strategy '));
    expect(r.stdout).toMatch(/\nfull jitter +\d+\.\d\d \( *\d+\.\d\d- *\d+\.\d\d\) +\d+ \( *\d+- *\d+\) +\d\.\d\n/);
  });

  it('--format csv', () => {
    const r = lab('herd', '--strategies', 'exponential', '--seeds', '0', '--format', 'csv');
    expect(r.stdout.trim().split('\n')).toEqual([
      'strategy,finish_s_mean,finish_s_min,finish_s_max,requests_mean,requests_min,requests_max,crashes_mean,crashes_min,crashes_max,unfinished,gave_up_mean,gave_up_min,gave_up_max',
      'exponential,120,120,120,17000,17000,17000,14,14,14,1,0,0,0',
    ]);
  });

  it('runs a scenario file', () => {
    const file = scenarioFile({
      name: 'small',
      clients: 100,
      horizonMs: 60_000,
      seeds: '0-3',
      policies: ['full jitter', { name: 'capped', backoff: { kind: 'constant', delayMs: 0 }, maxAttempts: 3 }],
    });
    const r = lab('herd', '--config', file, '--format', 'json');
    expect(r.status).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.experiment).toBe('scenario');
    expect(json.name).toBe('small');
    expect(json.seeds).toEqual([0, 1, 2, 3]);
    expect(json.rows.map((row: { strategy: string }) => row.strategy)).toEqual(['full jitter', 'capped']);
    // 100 clients × 3 attempts, all during start-up: each request gives up after 300 sends in all.
    expect(json.rows[1].requests).toEqual({ mean: 300, min: 300, max: 300 });
  });

  describe('a scenario whose clients give up (docs/lab.md\'s example: capacity 3, gRPC default with maxAttempts 5)', () => {
    const grpcDefault = { name: 'gRPC default', backoff: { kind: 'proportional jitter', initialBackoffMs: 100, backoffMultiplier: 2, maxBackoffMs: 1000, jitter: 0.2 }, maxAttempts: 5 };
    const server = { tickMs: 10, capacityPerTick: 3, crashWindowTicks: 10, crashLimit: 100, restartMs: 1000, startupMs: 1000 };
    const capped = scenarioFile({ name: 'capped', server, seeds: '0-1', policies: ['full jitter', grpcDefault] });
    const budget = { kind: 'retry throttling', maxTokens: 4, tokenRatio: 0.1 };
    const budgeted = scenarioFile({ name: 'budgeted', server, seeds: '0-1', policies: [{ ...grpcDefault, name: 'throttled', budget }] });

    it('the JSON counts who gave up, per row and per run', () => {
      const r = lab('herd', '--config', capped, '--format', 'json', '--per-seed', '--workers', '0');
      expect(r.status).toBe(0);
      const json = JSON.parse(r.stdout);
      expect(json.rows[0].gaveUp).toEqual({ mean: 0, min: 0, max: 0 });
      const row = json.rows[1];
      expect(Object.keys(row)).toEqual(['strategy', 'finish', 'requests', 'crashes', 'unfinished', 'gaveUp']);
      // Every run ends early (1.83 s, 1.84 s) because 969 and 973 of the 1,000 requests gave up, not because they succeeded.
      expect([row.strategy, row.finish, row.requests.mean, row.unfinished, row.gaveUp]).toEqual(['gRPC default', { mean: 1.835, min: 1.83, max: 1.84 }, 5000, 0, { mean: 971, min: 969, max: 973 }]);
      expect(json.runs[2]).toEqual({ strategy: 'gRPC default', seed: 0, finish: 1.84, requests: 5000, crashes: 1, finished: true, succeeded: 31, gaveUp: 969 });
      expect(json.runs[3]).toMatchObject({ seed: 1, succeeded: 27, gaveUp: 973 });
      expect(json.runs[0]).toMatchObject({ strategy: 'full jitter', seed: 0, succeeded: 1000, gaveUp: 0 });
    });

    it('the table flags the row and says what finish means; --per-seed and CSV carry the counts', () => {
      const r = lab('herd', '--config', capped, '--per-seed', '--workers', '0');
      expect(r.status).toBe(0);
      expect(r.stdout).toContain('gRPC default seed 0: finish 1.84 requests 5000 crashes 1 gave up 969\n');
      expect(r.stdout).toContain('\nfull jitter     14.37 ( 13.93- 14.80)       6314 (    6309-    6319)     1.0\n');
      expect(r.stdout).toContain('\ngRPC default     1.83 (  1.83-  1.84)       5000 (    5000-    5000)     1.0 (971 gave up)\n');
      expect(r.stdout).toContain('finish is when the last request succeeded or gave up');
      const csv = lab('herd', '--config', capped, '--format', 'csv', '--per-seed', '--workers', '0').stdout.trim().split('\n');
      expect(csv[0]).toBe('strategy,seed,finish_s,requests,crashes,finished,succeeded,gave_up');
      expect(csv[3]).toBe('gRPC default,0,1.84,5000,1,true,31,969');
    });

    it('a budget that refuses retries makes the run short, and the table says why', () => {
      const json = JSON.parse(lab('herd', '--config', budgeted, '--format', 'json', '--per-seed', '--workers', '0').stdout);
      expect(json.runs.map((x: { finish: number; succeeded: number; gaveUp: number }) => [x.finish, x.succeeded, x.gaveUp])).toEqual([
        [0.14, 0, 1000],
        [0.14, 0, 1000],
      ]);
      // maxTokens 4: the second failure leaves 2 tokens (not above half), so every client sends twice during start-up.
      const table = lab('herd', '--config', budgeted, '--workers', '0').stdout;
      expect(table).toContain('\nthrottled        0.14 (  0.14-  0.14)       2000 (    2000-    2000)     0.0 (1000 gave up)\n');
    });
  });

  it.each([
    [['herd', '--strategies', 'foo'], '--strategies "foo": unknown strategy "foo"'],
    [['herd', '--seeds', '5-1'], '--seeds "5-1": the range 5-1 goes down'],
    [['herd', '--config', '/does/not/exist.json'], '--config "/does/not/exist.json": no such file'],
    [['herd', '--format', 'xml'], "argument 'xml' is invalid"],
    [['herd', '--spread', 'abc'], '--spread "abc": expected a number'],
    [['herd', '--workers', '-1'], '--workers "-1": expected an integer'],
    [['herd', '--spread', '0x10'], '--spread "0x10": expected a number from 0 to 120, in plain decimal'],
    [['herd', '--spread', '1e0'], '--spread "1e0": expected a number from 0 to 120, in plain decimal'],
    [['herd', '--spread', 'Infinity'], '--spread "Infinity": expected a number'],
    [['herd', '--workers', '1.0'], '--workers "1.0": expected an integer from 0 to 64, in plain decimal'],
    [['layers', '--attempts', '0x3'], '--attempts "0x3": expected an integer from 1 to 10'],
    [['layers', '--depth', '3e0'], '--depth "3e0": expected an integer from 1 to 10'],
    [['serve', '--port', '8e3'], '--port "8e3": expected an integer from 0 to 65535'],
    [['herd', '--config', scenarioFile({ arrivals: { kind: 'together', spreadMs: 1e9 }, policies: ['immediate'] })], 'arrivals.spreadMs must be ≤ horizonMs (120000): first sends after the horizon never happen, got 1000000000'],
    [['herd', '--config', scenarioFile({ seeds: [1.5], policies: ['immediate'] })], 'seeds must be text such as "0-19" or a non-empty array of integers ≥ 0, got [1.5]'],
    [['herd', '--config', jsonFile({ clientz: 10 })], 'clientz is not a known field (did you mean clients?)'],
    [['herd', '--nope'], "unknown option '--nope'"],
    [['herd', '--sead', '3'], "unknown option '--sead' (did you mean --seeds?)"],
    [['herd', '--seedz', '3'], "unknown option '--seedz' (did you mean --seeds?)"],
    [['herd', '--sed', '3'], "unknown option '--sed' (did you mean --seeds?)"],
    [['budget', '--polices', '4 attempts'], "unknown option '--polices' (did you mean --policies?)"],
    [['live', 'herd', '--horizn', '5'], "unknown option '--horizn' (did you mean --horizon?)"],
    [['herd', '--config', '/dev/null', '--spread', '1'], '--spread cannot be combined with --config'],
    [['bogus'], 'unknown command "bogus" (commands: all, herd,'],
    [['hred'], 'unknown command "hred" (did you mean herd?)'],
    [['help', 'hred'], 'help "hred": unknown command (did you mean herd?)'],
    [['all', '--frmat', 'json'], "unknown option '--frmat' (did you mean --format? all has no --format; it is an option of herd, waits, budget,"],
    [['--frmat', 'json'], "unknown option '--frmat' (did you mean --format? all has no --format; it is an option of herd,"],
    [['all', '--format', 'json'], "unknown option '--format' (all has no --format; it is an option of herd,"],
    [['herd', '--lve'], "unknown option '--lve' (did you mean --live? herd has no --live; it is an option of all, layers)"],
    [['fleet', '--flush', '50'], "unknown option '--flush' (did you mean --flush-interval?)"],
    [['budget', '--grpc-service', 'x.json'], "unknown option '--grpc-service' (did you mean --grpc-service-config?)"],
    [['--out', '/dev/null'], '--out "/dev/null": is a file, not a folder'],
    [['all', '--workers', 'x'], '--workers "x": expected an integer'],
    [['herd', '--bins', '100'], '--bins "100" bins one run per policy: give one seed with --seeds (got 0-19)'],
    [['herd', '--bins', '15', '--seeds', '0'], '--bins "15": must be a whole number of 10 ms ticks'],
    [['herd', '--bins', '100', '--seeds', '0', '--format', 'table'], '--bins "100" prints CSV or JSON'],
    [['herd', '--bins', '100', '--seeds', '0', '--per-seed'], 'it cannot be combined with --per-seed'],
    [['waits', '--clients', '0'], '--clients "0": expected an integer from 1 to 10000'],
    [['waits', '--strategies', 'lots'], '--strategies "lots": unknown strategy "lots"'],
    [['waits', '--format', 'table'], 'waits prints CSV or JSON'],
    [['waits', '--format', 'xml'], "option '--format <format>' argument 'xml' is invalid. Allowed choices are csv, json."],
    [['waits', '--format', 'jsn'], "option '--format <format>' argument 'jsn' is invalid. Did you mean json? Allowed choices are csv, json."],
    [['waits', '--format', 'TABLE'], 'waits prints CSV or JSON'],
    [['herd', '--format', 'jsn'], "option '--format <format>' argument 'jsn' is invalid. Did you mean json? Allowed choices are table, json, csv."],
    // One flag name for a run's seed in every command: waits draws one, and says so to a list.
    [['waits', '--seed', '3'], "unknown option '--seed' (did you mean --seeds?)"],
    [['waits', '--seeds', '0-3'], '--seeds "0-3": waits draws every strategy\'s waits from one seed: give one seed, e.g. --seeds 0'],
    [['waits', '--seeds', 'x'], '--seeds "x": "x" is not a seed or a range'],
    [['herd', '--strategies', 'full jiter'], '--strategies "full jiter": unknown strategy "full jiter" (did you mean full jitter? choose from immediate, fixed 1s, exponential, full jitter, equal jitter, decorrelated)'],
    [['herd', '--strategies', 'full jitter,FULL JITTER'], '--strategies "full jitter,FULL JITTER": a strategy is listed twice'],
    [['budget', '--policies', 'no retyr'], '--policies "no retyr": unknown policy "no retyr" (did you mean no retry?'],
    [['budget', '--trace', '0', '--series', 'tokns'], '--series "tokns": unknown series "tokns" (did you mean tokens? choose from tokens, per-second)'],
    [['fleet', '--policies', '4 atempts'], '--policies "4 atempts": unknown policy "4 atempts" (did you mean 4 attempts?'],
    [['contention', '--strategies', 'no backof'], '--strategies "no backof": unknown strategy "no backof" (did you mean no backoff?'],
    [['hedging', '--policies', 'fixed dealy'], '--policies "fixed dealy": unknown policy "fixed dealy" (did you mean fixed delay?'],
    [['herd', '--config', scenarioFile({ policies: ['full jitter', 'exponential'] }), '--strategies', 'ful jitter'], 'the config has no policy named "ful jitter" (did you mean full jitter? it has full jitter, exponential)'],
    [['live', 'herdd'], 'live: unknown experiment "herdd" (did you mean herd?)'],
    [['live'], 'live: name the experiment: `live herd`, `live budget` or `live metastable`'],
    [['live', 'herd', 'extra'], "too many arguments for 'herd'"],
  ])('%j exits 2 with one line', (args, message) => {
    const r = lab(...args);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('a file that is not JSON gives one line; a closed pipe ends quietly; a bad --out fails before any run', () => {
    const dir = tempDir('herdless-');
    const file = join(dir, 'broken.json');
    writeFileSync(file, 'not json {\n  "a": 1\n');
    const r = lab('herd', '--config', file);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('not valid JSON');
    const piped = spawnSync('bash', ['-c', `"${process.execPath}" "${main}" herd --strategies "full jitter" --per-seed --workers 0 | head -1`], { encoding: 'utf8' });
    expect(piped.stdout.trim()).toMatch(/^# herd: 1000 clients/);
    expect(piped.stderr).toBe('');
    const asFile = join(dir, 'plain-file');
    writeFileSync(asFile, 'x');
    const out = lab('--out', join(asFile, 'sub'));
    expect(out.status).toBe(2);
    expect(out.stdout).toBe('');
    expect(out.stderr.trim()).toBe(`herdless-lab: --out ${JSON.stringify(join(asFile, 'sub'))}: ${asFile} is a file, not a folder`);
  });

  it('--out with a planted manifest and a `data` link: exit 2 before any run, one line, the link’s target untouched', () => {
    const parent = tempDir('herdless-');
    const victim = join(parent, 'victim');
    mkdirSync(victim);
    writeFileSync(join(victim, 'herd.json'), 'mine');
    const out = join(parent, 'out');
    mkdirSync(out);
    writeFileSync(join(out, '.herdless-report.json'), JSON.stringify(['index.html', 'data/herd.json']));
    symlinkSync(victim, join(out, 'data'));
    const r = lab('--out', out);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`herdless-lab: --out ${JSON.stringify(out)}: data is a symbolic link the lab did not make; it follows none — remove it or choose a new folder\n`);
    expect(readdirSync(victim)).toEqual(['herd.json']);
    expect(readFileSync(join(victim, 'herd.json'), 'utf8')).toBe('mine');
  });

  it('a config file with a negative capacity exits 2 naming the field', () => {
    const dir = tempDir('herdless-');
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ clients: 1, arrivals: { kind: 'together', spreadMs: 0 }, server: { tickMs: 10, capacityPerTick: -1, crashWindowTicks: 10, crashLimit: 1, restartMs: 1, startupMs: 0 }, horizonMs: 100, policies: ['immediate'] }));
    const r = lab('herd', '--config', file);
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(`herdless-lab: --config ${JSON.stringify(file)}: server.capacityPerTick must be ≥ 0, got -1`);
  });
});

describe('names on the command line: letter case is not part of a name', () => {
  it('herd --strategies "Full Jitter" --format JSON runs full jitter and prints its name as the lab spells it', () => {
    const typed = lab('herd', '--strategies', 'Full Jitter', '--seeds', '0', '--format', 'JSON', '--workers', '0');
    const exact = lab('herd', '--strategies', 'full jitter', '--seeds', '0', '--format', 'json', '--workers', '0');
    expect(typed.status).toBe(0);
    expect(typed.stdout).toBe(exact.stdout);
    expect(JSON.parse(typed.stdout).rows[0].strategy).toBe('full jitter');
  });

  it('budget --trace 0 --series TOKENS --format CSV is the tokens block', () => {
    const typed = lab('budget', '--trace', '0', '--series', 'TOKENS', '--format', 'CSV');
    expect(typed.status).toBe(0);
    expect(typed.stdout).toBe(lab('budget', '--trace', '0', '--series', 'tokens').stdout);
    expect(typed.stdout.split('\n')[0]).toBe('tick,time_s,tokens');
  });

  it('a config\'s policy named in --strategies with other case is that policy', () => {
    const file = scenarioFile({ clients: 10, horizonMs: 2000, policies: ['full jitter', 'exponential'] });
    const r = lab('herd', '--config', file, '--strategies', 'EXPONENTIAL', '--seeds', '0', '--format', 'csv');
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n').slice(1).map((l) => l.split(',')[0])).toEqual(['exponential']);
  });
});

describe('herdless-lab herd --bins and waits (the figures’ data)', () => {
  it('--bins 100 --format json: seed 0 of exponential is one bar of 1000 per return', () => {
    const r = lab('herd', '--strategies', 'exponential', '--seeds', '0', '--bins', '100', '--format', 'json', '--workers', '0');
    expect(r.status).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.experiment).toBe('herd-bins');
    expect(json.binMs).toBe(100);
    const full = json.bins.filter((b: { arrivals: number }) => b.arrivals > 0);
    expect(full.slice(0, 4)).toEqual([
      { series: 'exponential', t: 0, t2: 0.1, arrivals: 1000 },
      { series: 'exponential', t: 0.2, t2: 0.3, arrivals: 1000 },
      { series: 'exponential', t: 0.6, t2: 0.7, arrivals: 1000 },
      { series: 'exponential', t: 1.4, t2: 1.5, arrivals: 1000 },
    ]);
  });

  it('waits: PyRandom(0)’s first draw times 200 ms is full jitter’s first wait', () => {
    const r = lab('waits', '--strategies', 'full jitter', '--clients', '1', '--failures', '2');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`strategy,client,failure,waitS,noJitterS\nfull jitter,0,1,${(0.8444218515250481 * 200) / 1000},0.2\n${r.stdout.split('\n')[2]}\n`);
    expect(r.stdout.split('\n')).toHaveLength(4);
  });

  it('waits --seeds 3: PyRandom(3)’s first draw (CPython: random.Random(3).random() = 0.23796462709189137) times 200 ms', () => {
    const r = lab('waits', '--strategies', 'full jitter', '--clients', '1', '--failures', '1', '--seeds', '3', '--format', 'json');
    expect(r.status).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.seed).toBe(3);
    expect(json.points).toEqual([{ strategy: 'full jitter', client: 0, failure: 1, waitS: (0.23796462709189137 * 200) / 1000, noJitterS: 0.2 }]);
  });
});
