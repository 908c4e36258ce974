import { defineConfig } from 'vitest/config';
import base from './vitest.mutation.config.js';

// The engine's mutation run (stryker.engine.config.mjs): the engine's focused test files only. The
// golden tables run the simulator while their files load, which instrumented takes minutes per mutant.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['packages/herdless/test/sim-engine*.test.ts', 'packages/herdless/test/sim-options.test.ts', 'packages/herdless/test/sim-throttle.test.ts'],
  },
});
