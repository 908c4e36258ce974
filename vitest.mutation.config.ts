import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// The mutation run of the core and the HTTP hint parsers (stryker.config.mjs): the test files that
// state their rules, in virtual time. Stryker runs every file here once with coverage (the dry run),
// then for each mutant the tests that reached it; a file that only drives the core through a socket,
// another process or a framework (gRPC, Connect, OTel, servers, the docs' blocks, the built dist/ in a
// child process) costs time on every mutant it reaches without stating a core rule the files below
// do not. The other mutation configs (engine, server, redis, http) spread this one and replace
// `include`. The lists replace the base config's rather than being merged with it: `mergeConfig`
// concatenates arrays, which kept the lab's test files and its build step (globalSetup) in every run.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'packages/herdless/test/backoff*.test.ts',
      'packages/herdless/test/breaker.test.ts',
      'packages/herdless/test/breaker-{broken-clock,counting,edges,machine,properties}.test.ts',
      'packages/herdless/test/budget*.test.ts',
      'packages/herdless/test/classify.test.ts',
      'packages/herdless/test/classify-edges.test.ts',
      'packages/herdless/test/adaptive-throttling.test.ts',
      'packages/herdless/test/hedge.test.ts',
      'packages/herdless/test/hedge-properties.test.ts',
      'packages/herdless/test/python-random*.test.ts',
      'packages/herdless/test/retry*.test.ts',
      'packages/herdless/test/core-*.test.ts',
      'packages/herdless/test/hint-parser-*.test.ts',
      'packages/herdless/test/http-retry-after.test.ts',
      'packages/herdless/test/http-date-inputs.test.ts',
      'packages/herdless/test/{boundaries,explicit-undefined,fuzz-ports,no-multiplication,option-typos,signals,window-extreme-clocks}.test.ts',
      // The simulator's golden figures (the article's tables, CPython's) catch changes to the backoff
      // curves and the seeded RNG that no single unit value would show.
      'packages/herdless/test/sim-herd.test.ts',
      'packages/herdless/test/sim-fleet.test.ts',
      'packages/herdless/test/sim-engine-paths.test.ts',
    ],
    exclude: ['**/node_modules/**'],
    globalSetup: [],
    reporters: ['default'],
  },
});
