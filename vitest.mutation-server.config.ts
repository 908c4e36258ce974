import { defineConfig } from 'vitest/config';
import base from './vitest.mutation.config.js';

// The mutation run of herdless/server (stryker.server.config.mjs): the shedder's rules on loopback
// and in virtual time, and the framework plugins that drive it. Left out: the tests that offer load
// from another process for seconds of real time (server-adaptive-limit, server-event-loop) and the
// 10 000-call burst (server-burst): they measure the machine, and each would rerun for every mutant
// it reaches; the rules they show are stated in virtual time by server-mutation-rules.test.ts.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'packages/herdless/test/server.test.ts',
      'packages/herdless/test/server-overload.test.ts',
      'packages/herdless/test/server-*-rules.test.ts',
      'packages/herdless/test/telemetry.test.ts',
      'packages/herdless/test/framework-plugins.test.ts',
    ],
  },
});
