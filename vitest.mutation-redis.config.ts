import { defineConfig } from 'vitest/config';
import base from './vitest.mutation.config.js';

// The mutation run of herdless/redis (stryker.redis.config.mjs): the tests that drive the shared
// budgets against a real redis-server on loopback. redis-fleet.test.ts runs the built library in
// child processes, which no mutant reaches.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['packages/herdless/test/redis-*.test.ts'],
    exclude: [...(base.test?.exclude ?? []), 'packages/herdless/test/redis-fleet.test.ts'],
  },
});
