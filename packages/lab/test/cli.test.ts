import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const lab = (...args: string[]) => {
  const r = spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

describe('herdless-lab herd', () => {
  it('--format json follows the contract', () => {
    const r = lab('herd', '--strategies', 'full jitter,exponential', '--seeds', '0-19', '--format', 'json');
    expect(r.status).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(Object.keys(json)).toEqual(['experiment', 'spread', 'seeds', 'rows']);
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

  it('prints the table in the article’s layout, and every run with --per-seed', () => {
    const r = lab('herd', '--strategies', 'full jitter', '--seeds', '0-1', '--per-seed');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('full jitter seed 0: finish 10.50 requests 6055 crashes 1\nfull jitter seed 1: finish 11.13 requests 6061 crashes 1\n');
    expect(r.stdout).toMatch(/\nfull jitter +\d+\.\d\d \( *\d+\.\d\d- *\d+\.\d\d\) +\d+ \( *\d+- *\d+\) +\d\.\d\n/);
  });

  it('--format csv', () => {
    const r = lab('herd', '--strategies', 'exponential', '--seeds', '0', '--format', 'csv');
    expect(r.stdout.trim().split('\n')).toEqual([
      'strategy,finish_s_mean,finish_s_min,finish_s_max,requests_mean,requests_min,requests_max,crashes_mean,crashes_min,crashes_max,unfinished',
      'exponential,120,120,120,17000,17000,17000,14,14,14,1',
    ]);
  });

  it('runs a scenario file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'herdless-'));
    const file = join(dir, 'small.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'small',
        clients: 100,
        arrivals: { kind: 'together', spreadMs: 0 },
        server: { tickMs: 10, capacityPerTick: 5, crashWindowTicks: 10, crashLimit: 100, restartMs: 1000, startupMs: 1000 },
        horizonMs: 60_000,
        seeds: '0-3',
        policies: ['full jitter', { name: 'capped', backoff: { kind: 'constant', delayMs: 0 }, maxAttempts: 3 }],
      }),
    );
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

  it.each([
    [['herd', '--strategies', 'foo'], '--strategies "foo": unknown strategy "foo"'],
    [['herd', '--seeds', '5-1'], '--seeds "5-1": the range 5-1 goes down'],
    [['herd', '--config', '/does/not/exist.json'], '--config "/does/not/exist.json": no such file'],
    [['herd', '--format', 'xml'], "argument 'xml' is invalid"],
    [['herd', '--spread', 'abc'], '--spread "abc": expected a number'],
    [['herd', '--workers', '-1'], '--workers "-1": expected an integer'],
    [['herd', '--nope'], "unknown option '--nope'"],
    [['herd', '--config', '/dev/null', '--spread', '1'], '--spread cannot be combined with --config'],
    [['bogus'], 'unknown command "bogus"'],
    [['--out', '/dev/null'], '--out "/dev/null": is a file, not a folder'],
    [['all', '--workers', 'x'], '--workers "x": expected an integer'],
  ])('%j exits 2 with one line', (args, message) => {
    const r = lab(...args);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('a file that is not JSON gives one line; a closed pipe ends quietly; a bad --out fails before any run', () => {
    const dir = mkdtempSync(join(tmpdir(), 'herdless-'));
    const file = join(dir, 'broken.json');
    writeFileSync(file, 'not json {\n  "a": 1\n');
    const r = lab('herd', '--config', file);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('not valid JSON');
    const piped = spawnSync('bash', ['-c', `"${process.execPath}" "${main}" herd --strategies "full jitter" --per-seed --workers 0 | head -1`], { encoding: 'utf8' });
    expect(piped.stdout.trim()).toMatch(/^full jitter seed 0: finish/);
    expect(piped.stderr).toBe('');
    const asFile = join(dir, 'plain-file');
    writeFileSync(asFile, 'x');
    const out = lab('--out', join(asFile, 'sub'));
    expect(out.status).toBe(2);
    expect(out.stdout).toBe('');
    expect(out.stderr.trim()).toBe(`herdless-lab: --out ${JSON.stringify(join(asFile, 'sub'))}: ${asFile} is a file, not a folder`);
  });

  it('a config file with a negative capacity exits 2 naming the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'herdless-'));
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ clients: 1, arrivals: { kind: 'together', spreadMs: 0 }, server: { tickMs: 10, capacityPerTick: -1, crashWindowTicks: 10, crashLimit: 1, restartMs: 1, startupMs: 0 }, horizonMs: 100, policies: ['immediate'] }));
    const r = lab('herd', '--config', file);
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(`herdless-lab: --config ${JSON.stringify(file)}: server.capacityPerTick must be ≥ 0, got -1`);
  });
});
