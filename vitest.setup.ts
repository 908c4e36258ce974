import fc from 'fast-check';

// Property tests draw from a fixed seed so that CI is repeatable (a run that fails, fails again with
// the same counterexample). Explore new inputs locally with FC_SEED=<integer> npm test, or FC_SEED=random.
const seed = process.env.FC_SEED;
if (seed !== 'random') fc.configureGlobal({ seed: seed === undefined ? 20261130 : Number(seed) });
