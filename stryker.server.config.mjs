// Mutation testing of herdless/server (`npm run mutation`): the load shedder, its answers, the
// adaptive limit and the event-loop signal. See docs/testing.md.
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutation-server.config.ts' },
  mutate: ['packages/herdless/src/server/**/*.ts', '!packages/herdless/src/server/index.ts'],
  incrementalFile: 'reports/stryker-incremental-server.json',
  htmlReporter: { fileName: 'reports/mutation-server/index.html' },
  jsonReporter: { fileName: 'reports/mutation-server/mutation.json' },
};
