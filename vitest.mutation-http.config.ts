import { defineConfig } from 'vitest/config';
import base from './vitest.mutation.config.js';

// The mutation run of herdless/http (stryker.http.config.mjs): its tests against a scripted loopback
// server, with waits on a ManualClock, through fetch, undici and axios (the adapters share its
// exchange). http-discarded-body.test.ts measures a child process's memory in real time: it reaches
// no mutant in this process.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'packages/herdless/test/http*.test.ts',
      'packages/herdless/test/{boundaries,explicit-undefined,no-multiplication,option-lists,signals}.test.ts',
    ],
    exclude: [...(base.test?.exclude ?? []), 'packages/herdless/test/http-discarded-body.test.ts'],
  },
});
