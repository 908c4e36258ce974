// The lab page's Web Worker: runs the library's own engine (herdless/sim) off the page's thread.
import { runScenario, scenarioFromSpec, type RunResult } from 'herdless/sim';
import { arrivalBins, type ArrivalBin } from '../charts/series.js';
import type { RunRequest, WorkerMessage } from './protocol.js';

/** The page's arrival chart bins runs by 100 ms, like the report's figures. */
const BIN_MS = 100;

const scope = self as unknown as { onmessage: ((e: MessageEvent<RunRequest>) => void) | null; postMessage(message: WorkerMessage): void };

scope.onmessage = (event) => {
  const { id, run } = event.data;
  try {
    const total = run.policies.length * run.seeds.length;
    let done = 0;
    const bins: ArrivalBin[] = [];
    const runs = run.policies.map((policy) => {
      const spec = { ...run.base, policy };
      const scenario = scenarioFromSpec(spec);
      const results = run.seeds.map((seed, i): Omit<RunResult, 'perTick'> => {
        const { perTick: _perTick, ...result } = runScenario(scenario, seed, { perTick: i === 0 });
        if (i === 0) bins.push(...arrivalBins(policy.name, { ...result, perTick: _perTick! }, spec.server.tickMs, BIN_MS));
        scope.postMessage({ type: 'progress', id, done: ++done, total });
        return result;
      });
      return { policy: policy.name, results };
    });
    scope.postMessage({ type: 'done', id, runs, bins });
  } catch (error) {
    scope.postMessage({ type: 'error', id, message: error instanceof Error ? error.message : String(error) });
  }
};
