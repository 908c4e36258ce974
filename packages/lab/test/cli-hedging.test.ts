import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const lab = (...args: string[]) => spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 120_000 });

describe('herdless-lab hedging', () => {
  it('the table: hedging halves the p99 at low load; at full load unbudgeted fixed hedging doubles the attempts and the p99, the budget holds both', () => {
    const r = lab('hedging', '--loads', '10,100', '--seeds', '0-1');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^# hedging: 10 replicas .* seeds 0-1$/);
    const cell = (load: string, policy: string): { p99: number; attempts: number } => {
      const line = lines.find((l) => l.startsWith(`${load.padStart(4)}   ${policy}  `))!;
      const cols = line.slice(7 + policy.length).trim().split(/\s+/);
      return { p99: Number(cols[1]), attempts: Number(cols[3]!.replace('x', '')) };
    };
    const lowNone = cell('10%', 'no hedging');
    for (const policy of ['fixed delay', 'fixed delay + budget', 'p95 delay', 'p95 delay + budget']) {
      expect(cell('10%', policy).p99, policy).toBeLessThan(lowNone.p99 / 2);
    }
    const highNone = cell('100%', 'no hedging');
    const highFixed = cell('100%', 'fixed delay');
    const highBudget = cell('100%', 'fixed delay + budget');
    expect(highFixed.attempts).toBeGreaterThan(1.9);
    expect(highFixed.p99).toBeGreaterThan(highNone.p99);
    expect(highBudget.attempts).toBeLessThanOrEqual(1.112);
    expect(Math.abs(highBudget.p99 - highNone.p99)).toBeLessThan(highFixed.p99 - highNone.p99);
    expect(lines).toContain('# fixed delay: p99 above no hedging\'s from 100% load');
  });

  it('--format csv: one row per load and policy; --figure-data: four metrics per row', () => {
    const csv = lab('hedging', '--loads', '50', '--seeds', '0', '--duration', '3', '--policies', 'no hedging,p95 delay', '--format', 'csv');
    expect(csv.status).toBe(0);
    const lines = csv.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('load,policy,p50_mean,p50_min,p50_max,p99_mean,p99_min,p99_max,p999_mean,p999_min,p999_max,amplification_mean,amplification_min,amplification_max,work_mean,work_min,work_max');
    expect(lines.slice(1).map((l) => l.split(',').slice(0, 2).join(','))).toEqual(['0.5,no hedging', '0.5,p95 delay']);
    const fig = lab('hedging', '--loads', '50', '--seeds', '0', '--duration', '3', '--policies', 'no hedging', '--figure-data');
    expect(fig.stdout.trimEnd().split('\n').map((l) => l.split(',').slice(0, 3).join(','))).toEqual([
      'policy,loadPct,metric',
      'no hedging,50,p50 (ms)',
      'no hedging,50,p99 (ms)',
      'no hedging,50,p99.9 (ms)',
      'no hedging,50,attempts per call',
    ]);
  });

  it('--percentile 99: the percentile rows are named p99, in the table, the CSV, the JSON and the figure data; the default keeps p95', () => {
    const args = ['hedging', '--loads', '50', '--seeds', '0', '--duration', '3'];
    const table = lab(...args, '--percentile', '99', '--policies', 'no hedging,p99 delay,p95 delay + budget');
    expect(table.stderr).toBe('');
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines.slice(2, 5).map((l) => l.slice(7, 25).trimEnd())).toEqual(['no hedging', 'p99 delay', 'p99 delay + budget']);
    expect(lines.slice(5)).toEqual(["# p99 delay: p99 at or below no hedging's at every load", "# p99 delay + budget: p99 at or below no hedging's at every load"]);
    const csv = lab(...args, '--percentile', '99.9', '--policies', 'p99.9 delay', '--format', 'csv');
    expect(csv.stdout.trimEnd().split('\n')[1]!.split(',').slice(0, 2)).toEqual(['0.5', 'p99.9 delay']);
    const json = JSON.parse(lab(...args, '--percentile', '99', '--policies', 'no hedging,p95 delay', '--format', 'json').stdout) as { rows: { policy: string }[]; crossovers: { policy: string }[] };
    expect(json.rows.map((r) => r.policy)).toEqual(['no hedging', 'p99 delay']);
    expect(json.crossovers).toEqual([{ policy: 'p99 delay', load: null }]);
    const fig = lab(...args, '--percentile', '99', '--policies', 'p99 delay', '--figure-data');
    expect(new Set(fig.stdout.trimEnd().split('\n').slice(1).map((l) => l.split(',')[0]))).toEqual(new Set(['p99 delay']));
    const byDefault = JSON.parse(lab(...args, '--policies', 'p95 delay + budget', '--format', 'json').stdout) as { rows: { policy: string }[] };
    expect(byDefault.rows.map((r) => r.policy)).toEqual(['p95 delay + budget']);
    const twice = lab(...args, '--percentile', '99', '--policies', 'p99 delay,p95 delay');
    expect(twice.stderr).toContain('--policies "p99 delay,p95 delay": a policy is listed twice');
    expect(lab(...args, '--policies', 'p99 delay').stderr).toContain('unknown policy "p99 delay" (did you mean p95 delay?');
  });

  it.each([
    [['--loads', '0'], '--loads'],
    [['--loads', '10,10'], 'listed twice'],
    [['--policies', 'always'], 'unknown policy'],
    [['--max-attempts', '11'], '--max-attempts'],
    [['--budget-ratio', '2'], '--budget-ratio'],
    [['--duration', '1'], '--duration'],
  ])('%j is refused with a message naming the flag', (args, text) => {
    const r = lab('hedging', ...args);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(text);
    expect(r.stdout).toBe('');
  });
});
