// Mutation testing of the library's runtime (`npm run mutation`): the retry loop and its guard, the
// options, hooks and telemetry, hedging, the circuit breaker's shell and keyed breakers, the clocks
// and the scheduler — against the tests that state their rules in virtual time (a ManualClock, a
// seeded RNG). See docs/testing.md.
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutation-runtime.config.ts' },
  mutate: ['packages/herdless/src/runtime/**/*.ts'],
  incrementalFile: 'reports/stryker-incremental-runtime.json',
  htmlReporter: { fileName: 'reports/mutation-runtime/index.html' },
  jsonReporter: { fileName: 'reports/mutation-runtime/mutation.json' },
};
