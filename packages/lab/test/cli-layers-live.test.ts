import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const lab = (...args: string[]) => {
  const r = spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 300_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

describe('herdless-lab layers --live', () => {
  it('--format json: the simulated rows, counted by real servers — 3 / 9 / 27, then 3 / 3 / 3', () => {
    const live = lab('layers', '--live', '--format', 'json');
    expect(live.stderr).toBe('');
    expect(live.status).toBe(0);
    expect(JSON.parse(live.stdout)).toEqual({
      schemaVersion: 1,
      experiment: 'layers',
      rows: [
        { policy: 'every layer retries', calls: { frontend: 3, backend: 9, db: 27 } },
        { policy: 'retry at one layer', calls: { frontend: 3, backend: 3, db: 3 } },
      ],
    });
    // The same rows as the simulation.
    expect(JSON.parse(live.stdout)).toEqual(JSON.parse(lab('layers', '--format', 'json').stdout));
  });

  it('other shapes match the simulation too (depth 4, 2 attempts), and the table says the counts are live', () => {
    const live = lab('layers', '--live', '--depth', '4', '--attempts', '2', '--format', 'csv');
    expect(live.stdout).toBe(lab('layers', '--depth', '4', '--attempts', '2', '--format', 'csv').stdout);
    expect(live.stdout).toContain('every layer retries,2,4,8,16');
    const table = lab('layers', '--live', '--depth', '1');
    expect(table.stdout).toContain('# live: node:http servers on 127.0.0.1');
    expect(table.stdout).toMatch(/retry at one layer\s+3$/m);
  });

  it('refuses a live chain of more than 1000 calls, naming the flags', () => {
    const r = lab('layers', '--live', '--depth', '5', '--attempts', '5');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('--attempts 5 --depth 5: 5^5 calls is more than 1000 (with --live)');
  });
});
