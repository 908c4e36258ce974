import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const lab = (...args: string[]) => {
  const r = spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

// The golden CSV is the output of scripts/contention-reference.py, an independent CPython
// implementation of the model (it shares no code with the lab): regenerate it with
//   python3 scripts/contention-reference.py > packages/lab/test/golden/contention.csv
const golden = readFileSync(new URL('./golden/contention.csv', import.meta.url), 'utf8');

describe('herdless-lab contention', () => {
  it('--format csv equals the CPython reference in every cell, to the printed digits', () => {
    const r = lab('contention', '--format', 'csv');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(`${r.stdout}`).toBe(golden);
    expect(golden.split('\n')[0]).toBe('clients,strategy,time_ms_mean,calls_mean');
    expect(golden.trim().split('\n')).toHaveLength(26);
  });

  it('the golden figures show the 2015 ranking: full jitter the fewest calls from 20 clients, equal jitter slower than full and decorrelated', () => {
    const cells = golden.trim().split('\n').slice(1).map((line) => {
      const [clients, strategy, time, calls] = line.split(',');
      return { clients: Number(clients), strategy: strategy!, time: Number(time), calls: Number(calls) };
    });
    const at = (n: number, s: string) => cells.find((c) => c.clients === n && c.strategy === s)!;
    for (const n of [10, 20, 30, 40, 50]) {
      expect(at(n, 'equal jitter').time).toBeGreaterThan(at(n, 'full jitter').time);
      expect(at(n, 'equal jitter').time).toBeGreaterThan(at(n, 'decorrelated').time);
      for (const s of ['exponential', 'equal jitter', 'no backoff']) expect(at(n, 'full jitter').calls).toBeLessThan(at(n, s).calls);
      if (n >= 20) expect(at(n, 'full jitter').calls).toBeLessThan(at(n, 'decorrelated').calls);
    }
    // At 10 clients decorrelated jitter makes fewer calls than full jitter: the table says so as it is.
    expect(at(10, 'decorrelated').calls).toBe(37.56);
  });

  it('the table: two blocks, clients by strategy; flags pick seeds, counts and strategies', () => {
    const r = lab('contention', '--seeds', '0-9', '--clients', '5,15', '--strategies', 'full jitter,no backoff');
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('# contention: each client updates one row once under optimistic concurrency (Brooker 2015); hops |N(10, 2)| ms, backoff base 5 ms, cap 2000 ms; seeds 0-9');
    expect(lines[1]).toBe('mean time until every client has succeeded, ms');
    expect(lines[2]).toBe('clients   full jitter   no backoff');
    expect(lines[3]).toMatch(/^ {6}5 {3} +\d+\.\d\d {3} +\d+\.\d\d$/);
    expect(lines[6]).toBe('mean calls (writes the server received)');
    // Same seeds, one cell: the CSV agrees with the table.
    const csv = lab('contention', '--seeds', '0-9', '--clients', '5', '--strategies', 'full jitter', '--format', 'csv').stdout.trim().split('\n')[1]!;
    expect(lines[3]).toContain(csv.split(',')[2]!);
  });

  it.each([
    [['--clients', '0'], '--clients "0": "0" is not a client count (integers from 1 to 1000, comma-separated, e.g. 10,20,30)'],
    [['--clients', '10,x'], '--clients "10,x": "x" is not a client count'],
    [['--clients', '10,10'], '--clients "10,10": a count is listed twice'],
    [['--clients', '1001'], 'is not a client count'],
    [['--strategies', 'fixed 1s'], '--strategies "fixed 1s": unknown strategy "fixed 1s" (choose from exponential, decorrelated, equal jitter, full jitter, no backoff)'],
    [['--seeds', '5-1'], '--seeds "5-1"'],
    [['--seeds', '0-999', '--clients', '1000'], '--seeds/--clients: seeds × strategies × the sum of clients² is 5.00e9; keep it ≤ 1e9'],
  ])('refuses %j, naming the flag and the value', (args, message) => {
    const r = lab('contention', ...args);
    expect(r.status).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(message);
  });
});
