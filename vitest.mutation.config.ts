import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// The mutation run (npm run mutation): the library's own tests only, on its TypeScript sources.
// The lab's CLI and browser tests run built files, which Stryker does not mutate, so they could
// only slow the run without killing a mutant. The lists below replace the base config's rather than
// being merged with it: `mergeConfig` concatenates arrays, which kept the lab's 17 test files and its
// build step (globalSetup) in every run, and every static mutant runs the whole suite.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['packages/herdless/test/**/*.test.ts'],
    // runtime-fetch.test.ts runs the built library in other runtimes (Bun, Deno, chromium): no mutant reaches it.
    exclude: ['**/node_modules/**', 'packages/herdless/test/examples.test.ts', 'packages/herdless/test/consumer-types.test.ts', 'packages/herdless/test/runtime-fetch.test.ts'],
    globalSetup: [],
    reporters: ['default'],
  },
});
