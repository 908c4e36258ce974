// Mutation testing of herdless/http (`npm run mutation`), but for its two hint parsers (retry-after.ts,
// http-date.ts), which stryker.config.mjs mutates with the core. See docs/testing.md.
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutation-http.config.ts' },
  mutate: [
    'packages/herdless/src/http/**/*.ts',
    '!packages/herdless/src/http/index.ts',
    '!packages/herdless/src/http/retry-after.ts',
    '!packages/herdless/src/http/http-date.ts',
  ],
  incrementalFile: 'reports/stryker-incremental-http.json',
  htmlReporter: { fileName: 'reports/mutation-http/index.html' },
  jsonReporter: { fileName: 'reports/mutation-http/mutation.json' },
};
