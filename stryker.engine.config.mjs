// Mutation testing of the simulator engine (`npm run mutation` runs it after stryker.config.mjs),
// against the engine's focused tests: its rules one by one (S1–S4, H1–H8), its options and its edges.
// The golden-table tests (the article's figures) run the simulator while their files load, 20 seeds
// per table; instrumented by Stryker that takes about 4 minutes, and every engine mutant would repeat
// it (Stryker put a run at over 20,000 hours). So the engine's score is the one its focused tests
// earn — a lower bound of what the whole suite catches. See docs/testing.md.
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutation-engine.config.ts' },
  mutate: ['packages/herdless/src/sim/engine.ts'],
  incrementalFile: 'reports/stryker-incremental-engine.json',
  htmlReporter: { fileName: 'reports/mutation-engine/index.html' },
  jsonReporter: { fileName: 'reports/mutation-engine/mutation.json' },
};
