// Mutation testing of herdless/redis (`npm run mutation` runs it after the core and the engine),
// against the tests that drive the shared budgets on a real redis-server. See docs/testing.md.
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutation-redis.config.ts' },
  mutate: ['packages/herdless/src/redis/**/*.ts', '!packages/herdless/src/redis/index.ts'],
  incrementalFile: 'reports/stryker-incremental-redis.json',
  htmlReporter: { fileName: 'reports/mutation-redis/index.html' },
  jsonReporter: { fileName: 'reports/mutation-redis/mutation.json' },
};
