// Mutation testing of the library's core and the HTTP hint parsers (`npm run mutation`, which also
// runs stryker.engine.config.mjs for the simulator engine): StrykerJS changes one thing at a time in
// the code below (an operator, a boundary, a constant) and runs the tests that cover it; a mutant
// that no test notices marks a rule no test states. See docs/testing.md.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  coverageAnalysis: 'perTest',
  mutate: [
    'packages/herdless/src/core/**/*.ts',
    '!packages/herdless/src/core/**/index.ts',
    'packages/herdless/src/http/retry-after.ts',
    'packages/herdless/src/http/http-date.ts',
  ],
  // Incremental: a re-run tests only the mutants whose code or covering tests changed since the
  // recorded run (committed, so CI starts from it).
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  // Static mutants — code that runs only while a module loads (constant tables, key lists, frozen
  // prototypes) — cannot be narrowed by per-test coverage: each one reruns the whole suite, about a
  // minute here, and the core has hundreds of them (a day of CPU on a 2-core machine). They are left
  // out of the score ("Ignored" in the reports); STRYKER_STATIC=1 includes them. See docs/testing.md.
  ignoreStatic: process.env.STRYKER_STATIC !== '1',
  concurrency: 2,
  // A mutant's time limit is its covering tests' time in the dry run × timeoutFactor + timeoutMS.
  // On a busy 2-core machine a test can take several times what it took in the dry run, and a
  // mutant stopped by the limit counts as killed: the margins are wide, so that a timeout means a
  // mutant that hangs (a loop that never ends, a promise that never settles), not a slow machine.
  timeoutFactor: 2,
  timeoutMS: 15_000,
  // The dry run (every test once, with coverage) takes minutes under load; Stryker's default gives up at 5.
  dryRunTimeoutMinutes: 30,
  thresholds: { high: 95, low: 90, break: 90 },
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  // Another run's sandbox (a second config run at once with its own --tempDirName) is not part of
  // the project: without this, Stryker would copy it into its own sandbox.
  ignorePatterns: ['.stryker-tmp*'],
  cleanTempDir: 'always',
};
