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
  // Tighter than the base's limits: every test here runs in virtual time (milliseconds each), so a
  // timeout is a mutant that hangs — most often one in ManualClock or the attempt loop, reached by
  // hundreds of tests — and each costs its limit plus a restart of the test runner. With the base's
  // 2 × + 15 s, the first run spent about two thirds of its time waiting on them.
  timeoutFactor: 1.5,
  timeoutMS: 8_000,
};
