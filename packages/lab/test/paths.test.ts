import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { invocationDir, userPath } from '../src/paths.js';
import { checkReportDir, writeReport } from '../src/report/write.js';
import { tempDir } from './temp.js';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** A gRFC A6 service config: the article's retryPolicy, with retryThrottling when `throttled`. */
const serviceConfig = (throttled: boolean): string =>
  JSON.stringify({
    methodConfig: [{ name: [{}], retryPolicy: { maxAttempts: 4, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] } }],
    ...(throttled ? { retryThrottling: { maxTokens: 10, tokenRatio: 0.1 } } : {}),
  });

/**
 * A project whose `npm run lab` runs the built lab from its root, as the repository's does, with a
 * subfolder `sub/`; `mine.json` at the root is a decoy (with retryThrottling), `sub/mine.json` the
 * user's file (without).
 */
function project(): { root: string; sub: string } {
  const root = tempDir('herdless-paths-');
  const sub = join(root, 'sub');
  mkdirSync(sub);
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'paths-check', private: true, scripts: { lab: `node ${JSON.stringify(main)}` } }));
  writeFileSync(join(root, 'mine.json'), serviceConfig(true));
  writeFileSync(join(sub, 'mine.json'), serviceConfig(false));
  mkdirSync(join(root, 'rep'));
  writeFileSync(join(sub, 'rep'), 'a file where the report folder would go');
  return { root, sub };
}

/** `npm run lab -- ARGS` typed in `cwd` (npm starts the lab at the project root and passes `cwd` as INIT_CWD). */
function npmLab(cwd: string, ...args: string[]) {
  const env = { ...process.env };
  delete env.INIT_CWD;
  delete env.npm_package_json;
  return spawnSync('npm', ['run', '--silent', 'lab', '--', ...args], { cwd, env, encoding: 'utf8', timeout: 300_000 });
}

describe('paths resolve against the folder the command was typed in', () => {
  it('from a subfolder, --grpc-service-config ./mine.json reads that folder’s file, not the root’s decoy', () => {
    const { sub } = project();
    const r = npmLab(sub, 'budget', '--grpc-service-config', './mine.json', '--policies', '4 attempts,4 attempts + gRPC throttling', '--seeds', '0-1', '--format', 'json', '--workers', '0');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const [plain, throttled, mine] = JSON.parse(r.stdout).rows as { policy: string; load: { mean: number } }[];
    expect(mine!.policy).toBe('gRPC service config');
    // sub/mine.json has no retryThrottling: the plain 4-attempt row's load (3.88×), not the decoy's 1.01×.
    expect(mine!.load).toEqual(plain!.load);
    expect(plain!.load.mean).toBeGreaterThan(3.8);
    expect(throttled!.load.mean).toBeLessThan(1.1);
  });

  it('--out rep means sub/rep, and the error names its absolute path', () => {
    const { sub } = project();
    const r = npmLab(sub, '--out', 'rep');
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(`herdless-lab: --out "rep" (${join(sub, 'rep')}): is a file, not a folder`);
  });

  it('--out rep writes the report into the subfolder it was typed in (npm’s INIT_CWD), not the root', () => {
    const { root, sub } = project();
    rmSync(join(sub, 'rep'));
    const saved = { INIT_CWD: process.env.INIT_CWD, npm_package_json: process.env.npm_package_json };
    // As npm starts the lab: in the package's folder (here, this process's), with the user's folder as INIT_CWD.
    process.env.INIT_CWD = sub;
    process.env.npm_package_json = join(process.cwd(), 'package.json');
    try {
      checkReportDir('rep');
      const index = writeReport('rep', [{ path: 'index.html', content: 'report' }]);
      expect(index).toBe(join(sub, 'rep', 'index.html'));
      expect(readFileSync(index, 'utf8')).toBe('report');
      expect(readdirSync(join(root, 'rep'))).toEqual([]); // the root's folder of the same name untouched
      expect(existsSync(join(process.cwd(), 'rep'))).toBe(false);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('a missing --config names the absolute path it looked at', () => {
    const { sub } = project();
    const r = npmLab(sub, 'herd', '--config', 's2.json');
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(`herdless-lab: --config "s2.json" (${join(sub, 's2.json')}): no such file`);
  });

  it('invocationDir: INIT_CWD only when npm started this process in its package folder', () => {
    const npm = { INIT_CWD: '/home/me/sub', npm_package_json: '/repo/package.json' };
    expect(invocationDir(npm, '/repo')).toBe('/home/me/sub');
    // Started elsewhere with an inherited INIT_CWD (a test's child, another tool): its own folder.
    expect(invocationDir(npm, '/tmp/elsewhere')).toBe('/tmp/elsewhere');
    expect(invocationDir({}, '/tmp/x')).toBe('/tmp/x');
    expect(invocationDir({ INIT_CWD: 'relative', npm_package_json: '/repo/package.json' }, '/repo')).toBe('/repo');
    expect(userPath('--out', 'rep', '/home/me/sub')).toEqual({ flag: '--out', given: 'rep', path: '/home/me/sub/rep' });
    expect(userPath('--out', '/abs/rep', '/home/me/sub').path).toBe('/abs/rep');
    expect(() => userPath('--config', ' ', '/x')).toThrow('--config " ": give a path');
  });
});

describe('help, version, workers', () => {
  const lab = (...args: string[]) => spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 300_000 });

  it('help herd exits 0 with herd’s help; help of an unknown command exits 2', () => {
    const r = lab('help', 'herd');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: herdless-lab herd \[options\]/);
    expect(r.stdout).toContain('--strategies <names>');
    const bad = lab('help', 'nope');
    expect(bad.status).toBe(2);
    // The list names every command (others are added over time) and commander's own `help`.
    expect(bad.stderr.trim()).toMatch(/^herdless-lab: help "nope": unknown command \(commands: all, herd, (?:[\w-]+, )*help\)$/);
    expect(bad.stderr).toContain('layers, ');
  });

  it('help of a subcommand (help live herd) prints that subcommand’s help, as live herd --help does', () => {
    const r = lab('help', 'live', 'herd');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: herdless-lab live herd \[options\]/);
    expect(r.stdout).toBe(lab('live', 'herd', '--help').stdout);
    const bad = lab('help', 'live', 'nope');
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim()).toBe('herdless-lab: help live nope: "nope" is not a command of live (choose from herd, budget, metastable)');
    expect(lab('help', 'herd', 'x').stderr.trim()).toBe('herdless-lab: help herd x: "x" is not a command of herd, which has none');
  });

  it('--version prints the lab’s version', () => {
    const r = lab('--version');
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe('0.1.0');
  });

  it('budget --workers 2 gives the numbers of --workers 0; layers takes the flag and checks it', () => {
    const args = ['budget', '--seeds', '0-2', '--policies', '4 attempts,4 attempts + gRPC throttling,4 attempts + AWS retry quota', '--format', 'json'];
    const inThread = lab(...args, '--workers', '0');
    const threads = lab(...args, '--workers', '2');
    expect(inThread.status).toBe(0);
    expect(threads.stdout).toBe(inThread.stdout);
    expect(JSON.parse(inThread.stdout).rows[0].load.mean.toFixed(2)).toBe('3.88');
    expect(lab('layers', '--workers', '2', '--format', 'csv').stdout).toBe('policy,frontend,backend,db\nevery layer retries,3,9,27\nretry at one layer,3,3,3\n');
    expect(lab('layers', '--workers', 'x').stderr.trim()).toBe('herdless-lab: --workers "x": expected an integer from 0 to 64');
  });
});
