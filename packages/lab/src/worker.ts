// A worker thread of the lab: runs (scenario, seed) jobs with the library's engine.
import { parentPort } from 'node:worker_threads';
import { runScenario, scenarioFromSpec } from 'herdless/sim';
import type { Job } from './runner.js';

parentPort!.on('message', (job: Job) => {
  const result = runScenario(scenarioFromSpec(job.spec), job.seed);
  parentPort!.postMessage({ id: job.id, result });
});
