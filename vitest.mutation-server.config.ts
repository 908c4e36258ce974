import { defineConfig } from 'vitest/config';
import base from './vitest.mutation.config.js';

// The mutation run of herdless/server (stryker.server.config.mjs): the shedder's rules on loopback
// and in virtual time. Left out: the tests that offer load from another process for seconds of real
// time (server-adaptive-limit, server-event-loop) and the 10 000-call burst (server-burst), which
// measure the machine and would rerun for every mutant they reach (the gradient limit's arithmetic
// is stated without a clock by server-gradient-rules.test.ts); and the fastify and hono plugins'
// tests, which test those folders (and wait a fixed 50 ms for a request to arrive).
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'packages/herdless/test/server.test.ts',
      'packages/herdless/test/server-overload.test.ts',
      'packages/herdless/test/server-*-rules.test.ts',
      'packages/herdless/test/telemetry.test.ts',
    ],
  },
});
