import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

// The mutation run (npm run mutation): the library's own tests only, on its TypeScript sources.
// The lab's CLI and browser tests run built files, which Stryker does not mutate, so they could
// only slow the run without killing a mutant.
export default mergeConfig(base, defineConfig({
  test: {
    include: ['packages/herdless/test/**/*.test.ts'],
    exclude: ['packages/herdless/test/examples.test.ts', 'packages/herdless/test/consumer-types.test.ts'],
    globalSetup: [],
    reporters: ['default'],
  },
}));
