// A worker thread of the lab: runs (scenario, seed) jobs with the library's engine.
import { parentPort } from 'node:worker_threads';
import { runJob, type Job } from './runner.js';

parentPort!.on('message', (job: Job) => {
  parentPort!.postMessage({ id: job.id, result: runJob(job) });
});
