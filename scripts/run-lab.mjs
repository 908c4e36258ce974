// `npm run lab`: rebuild the library and the lab only when a source is newer than the last build,
// then run the lab in this process. `tsc -b` alone would spend 0.75–1 s deciding that nothing changed.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The newest modification time under `dir` (files only), or 0 when it does not exist. */
function newest(dir) {
  let latest = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

function builtAt(pkg) {
  try {
    return statSync(join(root, 'packages', pkg, 'dist', '.tsbuildinfo')).mtimeMs;
  } catch {
    return -1;
  }
}

const stale = ['herdless', 'lab'].some((pkg) => {
  const dir = join(root, 'packages', pkg);
  const sources = Math.max(newest(join(dir, 'src')), statSync(join(dir, 'tsconfig.json')).mtimeMs, statSync(join(root, 'tsconfig.base.json')).mtimeMs);
  return sources > builtAt(pkg);
});
if (stale) {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-b', join(root, 'packages', 'lab')], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
// The page's bundles (for `serve`), made anew after a build or when missing.
const bundled = join(root, 'packages', 'lab', 'dist', 'web', 'bundle', 'page.js');
let bundledAt = -1;
try {
  bundledAt = statSync(bundled).mtimeMs;
} catch {
  // not bundled yet
}
if (bundledAt < builtAt('lab')) {
  const { bundlePage } = await import(pathToFileURL(join(root, 'packages', 'lab', 'scripts', 'bundle-page.mjs')).href);
  await bundlePage();
}
await import(pathToFileURL(join(root, 'packages', 'lab', 'dist', 'main.js')).href);
