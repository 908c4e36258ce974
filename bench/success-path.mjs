// 1. The success path: one successful call through each library, ns per call and ratio to bare.
import { compare } from './lib/harness.mjs';
import { op, successSubjects } from './lib/subjects.mjs';

export async function benchSuccessPath({ rounds, minCpuMs }) {
  const subjects = successSubjects();
  const cases = Object.fromEntries(Object.entries(subjects).map(([name, call]) => [name, () => call(op)]));
  // A sanity check before timing: every subject resolves with the operation's value.
  for (const [name, run] of Object.entries(cases)) {
    const value = await run();
    if (value !== 1) throw new Error(`${name} resolved with ${String(value)}`);
  }
  return compare(cases, { rounds, minCpuMs, baseline: 'bare await op()', batchSamples: 256 });
}
