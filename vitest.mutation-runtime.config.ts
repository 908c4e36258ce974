import { defineConfig } from 'vitest/config';
import base from './vitest.mutation.config.js';

// The runtime's mutation run (stryker.runtime.config.mjs): the test files that drive retry(), the
// hedger, the breaker's shell, keyed breakers, hooks, telemetry and the clocks in virtual time. Files
// that reach the runtime only through a socket, a framework or another process (http, gRPC, Connect,
// the built dist/ in a child process) are left to their own areas' runs, and so is signals.test.ts:
// its 100,000-attempt heap checks take seconds, repeated for every mutant they reach (the core and
// http runs include it).
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'packages/herdless/test/retry*.test.ts',
      'packages/herdless/test/hedge*.test.ts',
      'packages/herdless/test/breaker.test.ts',
      'packages/herdless/test/breaker-{broken-clock,counting,edges,keyed-rules,lifecycle,machine,properties,shell-rules}.test.ts',
      'packages/herdless/test/budget*.test.ts',
      'packages/herdless/test/adaptive-throttling.test.ts',
      'packages/herdless/test/manual-clock*.test.ts',
      'packages/herdless/test/abort-subscriptions.test.ts',
      'packages/herdless/test/hook-errors.test.ts',
      'packages/herdless/test/runtime-{options,ports}-rules.test.ts',
      'packages/herdless/test/telemetry.test.ts',
      'packages/herdless/test/core-*.test.ts',
      'packages/herdless/test/{boundaries,explicit-undefined,fuzz-ports,option-lists,option-suggestions,option-typos}.test.ts',
    ],
  },
});
