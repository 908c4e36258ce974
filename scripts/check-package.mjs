// CI's package check: pack the library and the lab as `npm publish` would, lint the tarballs
// (publint, @arethetypeswrong/cli), and install them into a fresh project that uses them the ways
// the README promises: ESM import, require() (Node.js ≥ 20.19 / 22.12 load ESM from require),
// TypeScript strict under `node16` and `bundler` resolution, and `npx herdless-lab` (its commands, and
// `serve` with the page bundled at pack time). Each tarball ships only what a user reads: the library
// no sources, source maps or maintainers' pages; the lab its page prebuilt, and no bundler.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout, clearTimeout } from 'node:timers';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name) => join(root, 'node_modules', '.bin', name);
const work = mkdtempSync(join(tmpdir(), 'herdless-package-'));
const run = (cmd, args, cwd = root) => {
  console.log(`$ ${[cmd, ...args].join(' ')}`);
  execFileSync(cmd, args, { cwd, stdio: 'inherit', env: { ...process.env, npm_config_update_notifier: 'false' } });
};
const output = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8' });

try {
  const packs = join(work, 'packs');
  mkdirSync(packs);
  run('npm', ['pack', '-w', 'herdless', '-w', '@herdless/lab', '--pack-destination', packs, '--silent']);
  const tarball = (prefix) => join(packs, readdirSync(packs).find((f) => f.startsWith(prefix)));
  const lib = tarball('herdless-0');
  const lab = tarball('herdless-lab-');

  // What each tarball holds: the sizes, and nothing a user does not read.
  const entries = (tgz) => output('tar', ['-tzf', tgz]).split('\n').filter(Boolean).map((e) => e.replace(/^package\//, ''));
  const libFiles = entries(lib);
  const labFiles = entries(lab);
  for (const [name, tgz, files] of [['herdless', lib, libFiles], ['@herdless/lab', lab, labFiles]]) {
    console.log(`${name}: ${(statSync(tgz).size / 1000).toFixed(1)} kB packed, ${files.length} files`);
  }
  const unwanted = libFiles.filter((f) => f.startsWith('src/') || f.endsWith('.map') || f === 'docs/testing.md');
  if (unwanted.length > 0) throw new Error(`the library tarball ships what no user reads: ${unwanted.slice(0, 5).join(', ')}${unwanted.length > 5 ? ', …' : ''}`);
  for (const bundle of ['dist/web/bundle/page.js', 'dist/web/bundle/sim-worker.js']) {
    if (!labFiles.includes(bundle)) throw new Error(`the lab tarball lacks the page bundle ${bundle} (prepack bundles it)`);
  }
  const BUNDLERS = ['esbuild', 'rollup', 'rolldown', 'vite', 'webpack', 'parcel', '@swc/core'];
  const labDeps = Object.keys(JSON.parse(readFileSync(join(root, 'packages', 'lab', 'package.json'), 'utf8')).dependencies ?? {});
  if (labDeps.some((d) => BUNDLERS.includes(d))) throw new Error(`@herdless/lab has a bundler among its dependencies: ${labDeps.filter((d) => BUNDLERS.includes(d)).join(', ')}`);
  console.log('tarball contents: ok');

  run(bin('publint'), ['run', lib, '--strict']);
  run(bin('publint'), ['run', lab, '--strict']);
  // ESM-only by decision (docs/versioning.md): CommonJS consumers load it through require(esm).
  run(bin('attw'), [lib, '--profile', 'esm-only']);

  const app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  run('npm', ['install', '--no-audit', '--no-fund', '--silent', lib, lab], app);

  // Every relative link of the installed library's README and guides resolves inside the package.
  const installed = join(app, 'node_modules', 'herdless');
  const pages = ['README.md', ...readdirSync(join(installed, 'docs')).map((f) => join('docs', f))];
  const broken = pages.flatMap((page) =>
    [...readFileSync(join(installed, page), 'utf8').matchAll(/\]\(([^)\s#]+)(?:#[^)\s]*)?\)/g)]
      .map((m) => m[1])
      .filter((to) => !/^[a-z]+:/i.test(to) && !existsSync(join(installed, dirname(page), to)))
      .map((to) => `${page} → ${to}`),
  );
  if (broken.length > 0) throw new Error(`links that leave the package: ${broken.join(', ')}`);
  console.log(`package links: ok (${pages.length} pages)`);

  const esm = `import { retry, fullJitterBackoff } from 'herdless';
import { withRetry } from 'herdless/http';
import { runScenario } from 'herdless/sim';
let n = 0;
const v = await retry(() => (++n < 2 ? Promise.reject(Object.assign(new Error('x'), { code: 'ECONNRESET' })) : n), { backoff: fullJitterBackoff({ initialBackoffMs: 1, maxBackoffMs: 1 }) });
if (v !== 2 || typeof withRetry !== 'function' || typeof runScenario !== 'function') throw new Error('ESM import failed');
console.log('ESM import: ok');`;
  writeFileSync(join(app, 'esm.mjs'), esm);
  run(process.execPath, ['esm.mjs'], app);
  writeFileSync(join(app, 'cjs.cjs'), `const { retry } = require('herdless'); const { withRetry } = require('herdless/http');
if (typeof retry !== 'function' || typeof withRetry !== 'function') throw new Error('require failed');
console.log('require(): ok');`);
  run(process.execPath, ['cjs.cjs'], app);

  const ts = `import { retry, createRetry, circuitBreaker, retryThrottlingBudget, isRetryError, type RetryOptions } from 'herdless';
import { withRetry, retryInfo } from 'herdless/http';
import { runScenario } from 'herdless/sim';
const options: RetryOptions = { maxAttempts: 3, deadlineMs: 1000 };
const call = createRetry({ budget: retryThrottlingBudget() });
const breaker = circuitBreaker({ openDurationMs: 5000 });
export async function main(url: string): Promise<number> {
  const res = await withRetry(fetch)(url);
  void retryInfo(res)?.reason;
  try {
    return await call(() => breaker.execute(() => retry(async () => 1, options)));
  } catch (e) {
    if (isRetryError(e)) return e.attempts;
    throw e;
  }
}
export const sim: typeof runScenario = runScenario;
`;
  writeFileSync(join(app, 'use.ts'), ts);
  for (const [module, moduleResolution] of [['node16', 'node16'], ['nodenext', 'nodenext'], ['esnext', 'bundler']]) {
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, exactOptionalPropertyTypes: true, noEmit: true, module, moduleResolution, target: 'es2022', lib: ['es2023', 'dom'], types: [] },
      files: ['use.ts'],
    }));
    run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app]);
    console.log(`TypeScript strict, module ${module}, moduleResolution ${moduleResolution}: ok`);
  }

  // A CommonJS TypeScript project: `require()` of an ES module types under `nodenext` / `node20`
  // (TypeScript ≥ 5.8); `node16` refuses it (TS1479) — docs/versioning.md says so.
  const cjs = join(app, 'cjs');
  mkdirSync(cjs);
  writeFileSync(join(cjs, 'package.json'), JSON.stringify({ type: 'commonjs' }));
  writeFileSync(join(cjs, 'use.ts'), "import { retry } from 'herdless';\nimport { withRetry } from 'herdless/http';\nexport const call = (): Promise<number> => retry(async () => 1);\nexport const adapter: typeof withRetry = withRetry;\n");
  for (const module of ['nodenext', 'node20']) {
    writeFileSync(join(cjs, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module, moduleResolution: 'nodenext', target: 'es2022', lib: ['es2023', 'dom'], types: [] },
      files: ['use.ts'],
    }));
    run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', cjs]);
    console.log(`TypeScript strict, CommonJS, module ${module}: ok`);
  }

  const herd = output('npx', ['--no-install', 'herdless-lab', 'herd', '--seeds', '0', '--strategies', 'full jitter', '--format', 'json'], app);
  const rows = JSON.parse(herd).rows;
  if (rows?.[0]?.strategy !== 'full jitter') throw new Error(`npx herdless-lab herd printed ${herd.slice(0, 200)}`);
  console.log('npx herdless-lab herd: ok');

  // `npx herdless-lab serve` from the installed tarballs: no bundler installed, the page and its
  // worker served from the bundles made at pack time.
  if (existsSync(join(app, 'node_modules', 'esbuild'))) throw new Error('installing the tarballs installed esbuild');
  await serveCheck(app);
  console.log('npx herdless-lab serve: ok');
  console.log('package check: ok');
} finally {
  rmSync(work, { recursive: true, force: true });
}

/** Starts `npx herdless-lab serve --port 0` in `app`, fetches the page, its script and its worker, and stops it. */
async function serveCheck(app) {
  // Its own process group: npx runs the lab under a shell, and a signal to npx alone is not passed
  // on (npm expects a terminal to signal the whole group), so the lab is stopped through its group.
  const child = spawn('npx', ['--no-install', 'herdless-lab', 'serve', '--port', '0'], { cwd: app, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  try {
    const url = await new Promise((resolve, reject) => {
      let out = '';
      const guard = setTimeout(() => reject(new Error(`herdless-lab serve printed no URL within 60 s: ${out}`)), 60_000);
      child.stdout.setEncoding('utf8').on('data', (d) => {
        out += d;
        const m = /lab page: (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(guard);
          resolve(m[1]);
        }
      });
      child.once('exit', (code) => reject(new Error(`herdless-lab serve exited with ${code}: ${out}`)));
    });
    for (const [path, type, needle] of [['', 'text/html', '/page.js'], ['page.js', 'text/javascript', 'sim-worker.js'], ['sim-worker.js', 'text/javascript', 'postMessage']]) {
      const res = await fetch(new URL(path, url));
      const body = await res.text();
      if (res.status !== 200 || !res.headers.get('content-type')?.startsWith(type) || !body.includes(needle)) {
        throw new Error(`GET /${path}: ${res.status} ${res.headers.get('content-type')}, ${body.length} bytes without ${needle}`);
      }
    }
  } finally {
    const exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', resolve);
    });
    try {
      process.kill(-child.pid, 'SIGINT');
    } catch {
      // the group is already gone
    }
    const late = setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }, 10_000);
    await exited;
    clearTimeout(late);
    child.stdout.destroy();
  }
}
