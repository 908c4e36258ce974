// 7. The HTTP adapters on loopback: one successful GET through each client — bare, with herdless's
// adapter, with the peer its users pick instead — in client CPU time per request (the server runs in
// a process of its own, so none of its work is counted). Each round runs every subject for a batch
// of sequential requests, in an order that rotates from round to round; a subject's figure is the
// median over rounds, a ratio is taken within each round (same conditions) and its median reported.
import { summarize } from './lib/harness.mjs';
import { adapterSubjects, startAdapterServer } from './lib/adapter-subjects.mjs';

function cpuNs() {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1e3;
}

async function batch(run, requests) {
  const start = cpuNs();
  for (let i = 0; i < requests; i++) await run();
  return (cpuNs() - start) / requests;
}

/** Requests per subject per round: about minCpuMs × 8 of CPU, a batch long enough that the CPU clock's tick is noise. */
export function adapterBatch(minCpuMs) {
  return Math.max(100, Math.round((minCpuMs * 8 * 1e6) / 250_000));
}

export async function benchAdapters({ rounds, minCpuMs }) {
  const server = await startAdapterServer();
  try {
    const cases = adapterSubjects(server.url);
    const names = Object.keys(cases);
    for (const name of names) {
      const body = await cases[name]();
      if (body !== 'ok') throw new Error(`${name} resolved with ${String(body)}`);
    }
    const requests = adapterBatch(minCpuMs);
    for (const name of names) await batch(cases[name], requests); // warm-up, not counted
    const samples = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = 0; r < rounds * 2; r++) {
      for (let i = 0; i < names.length; i++) {
        const name = names[(i + r) % names.length];
        samples[name].push(await batch(cases[name], requests));
      }
    }
    return summarize(samples);
  } finally {
    await server.stop();
  }
}
