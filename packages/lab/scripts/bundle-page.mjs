// Bundles the lab page and its worker — the compiled lab (dist/web) with the library's compiled ESM
// (herdless/dist, through the workspace link) — into dist/web/bundle/, where `herdless-lab serve`
// reads them. It runs when the lab is built (`npm run build`, the test setup, `npm run lab`) and
// packed (prepack), so the published lab needs no bundler at run time: esbuild is a development
// dependency only. Run after `tsc -b packages/lab`.
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const outdir = `${dist}web/bundle`;

/** Writes dist/web/bundle/page.js and sim-worker.js; resolves with their paths. */
export async function bundlePage() {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    entryPoints: { page: `${dist}web/page.js`, 'sim-worker': `${dist}web/sim-worker.js` },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    outdir,
    logLevel: 'warning',
    legalComments: 'none',
    metafile: true,
  });
  return Object.keys(result.metafile.outputs);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const files = await bundlePage();
  // stderr: `npm pack --json` runs this in prepack, and its stdout must stay JSON.
  console.error(`lab page bundled: ${files.join(', ')}`);
}
