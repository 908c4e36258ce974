import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The CLI tests run the built command exactly as a user does, so build it first (incremental: fast when
// up to date), with the page's bundles that `herdless-lab serve` reads.
export default async function setup(): Promise<void> {
  const root = fileURLToPath(new URL('../../..', import.meta.url));
  execFileSync(process.execPath, [fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url)), '-b', 'packages/lab'], {
    cwd: root,
    stdio: 'inherit',
  });
  const { bundlePage } = (await import(new URL('../scripts/bundle-page.mjs', import.meta.url).href)) as { bundlePage: () => Promise<string[]> };
  await bundlePage();
}
