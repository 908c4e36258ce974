import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests run against the TypeScript sources, so `npm test` needs no build step.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^herdless\/http$/, replacement: fileURLToPath(new URL('./packages/herdless/src/http/index.ts', import.meta.url)) },
      { find: /^herdless\/otel$/, replacement: fileURLToPath(new URL('./packages/herdless/src/otel/index.ts', import.meta.url)) },
      { find: /^herdless\/undici$/, replacement: fileURLToPath(new URL('./packages/herdless/src/undici/index.ts', import.meta.url)) },
      { find: /^herdless\/axios$/, replacement: fileURLToPath(new URL('./packages/herdless/src/axios/index.ts', import.meta.url)) },
      { find: /^herdless\/redis$/, replacement: fileURLToPath(new URL('./packages/herdless/src/redis/index.ts', import.meta.url)) },
      { find: /^herdless\/grpc$/, replacement: fileURLToPath(new URL('./packages/herdless/src/grpc/index.ts', import.meta.url)) },
      { find: /^herdless\/grpc-js$/, replacement: fileURLToPath(new URL('./packages/herdless/src/grpc-js/index.ts', import.meta.url)) },
      { find: /^herdless\/connect$/, replacement: fileURLToPath(new URL('./packages/herdless/src/connect/index.ts', import.meta.url)) },
      { find: /^herdless\/fastify$/, replacement: fileURLToPath(new URL('./packages/herdless/src/fastify/index.ts', import.meta.url)) },
      { find: /^herdless\/hono$/, replacement: fileURLToPath(new URL('./packages/herdless/src/hono/index.ts', import.meta.url)) },
      { find: /^herdless\/server$/, replacement: fileURLToPath(new URL('./packages/herdless/src/server/index.ts', import.meta.url)) },
      { find: /^herdless\/core$/, replacement: fileURLToPath(new URL('./packages/herdless/src/core/index.ts', import.meta.url)) },
      { find: /^herdless\/sim$/, replacement: fileURLToPath(new URL('./packages/herdless/src/sim/index.ts', import.meta.url)) },
      { find: /^herdless$/, replacement: fileURLToPath(new URL('./packages/herdless/src/index.ts', import.meta.url)) },
    ],
  },
  test: {
    // The default reporter, and a last line saying so when the browser suite could not run.
    reporters: ['default', './packages/lab/test/browser-skip-reporter.ts'],
    include: ['packages/*/test/**/*.test.ts'],
    // Failsafes against a hang, not speed limits: a test or hook that starts servers or runs the
    // built CLI takes many times longer on a busy 2-core machine than on an idle one, and a limit
    // that fires there fails a correct test. (vitest's hook default is 10 s.)
    // vitest's default is one worker fewer than the cores: one worker on a 2-core machine. Most of
    // the suite's wall time is spent waiting (loopback servers, child processes, redis-server, the
    // browser), so two workers keep both cores busy; the tests hold on a machine busier than that.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 300_000,
    hookTimeout: 300_000,
    globalSetup: ['packages/lab/test/global-setup.ts'],
    setupFiles: ['vitest.setup.ts'],
  },
});
