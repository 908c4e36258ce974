// The adapter benchmark's subjects: one successful GET (200 "ok", body read) through each HTTP
// client, bare, with herdless's adapter, and with what its users pick instead — each set up as its
// README suggests, built once; the measured function is one request.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import axios from 'axios';
import axiosRetry from 'axios-retry';
import { Agent, interceptors, request } from 'undici';
import { withRetry } from '../../packages/herdless/dist/http/index.js';
import { retryAdapter } from '../../packages/herdless/dist/axios/index.js';
import { retryInterceptor } from '../../packages/herdless/dist/undici/index.js';

/** Starts the loopback server process; resolves with its URL and a stop function. */
export async function startAdapterServer() {
  const child = spawn(process.execPath, [new URL('../adapters-server.mjs', import.meta.url).pathname], { stdio: ['pipe', 'pipe', 'inherit'] });
  const [chunk] = await once(child.stdout, 'data');
  const url = `http://127.0.0.1:${String(chunk).trim()}/item`;
  return {
    url,
    stop: async () => {
      child.stdin.end();
      await once(child, 'exit');
    },
  };
}

/** The pairs compared: [herdless subject, the peer it is measured against]. */
export const adapterPairs = [
  ['withRetry(fetch)', 'bare fetch'],
  ['herdless/undici retryInterceptor', 'undici interceptors.retry'],
  ['herdless/axios retryAdapter', 'axios-retry'],
];

/** name → () => Promise<string> (the body). Every client keeps its connections alive. */
export function adapterSubjects(url) {
  const bareFetch = fetch;
  const retryingFetch = withRetry(fetch, { maxAttempts: 3 });
  const undiciPeer = new Agent().compose(interceptors.retry({ maxRetries: 2 }));
  const undiciHerdless = new Agent().compose(retryInterceptor({ maxAttempts: 3 }));
  const undiciBare = new Agent();
  const axiosPeer = axios.create();
  axiosRetry(axiosPeer, { retries: 2, retryDelay: axiosRetry.exponentialDelay });
  const axiosHerdless = axios.create({ adapter: retryAdapter({ maxAttempts: 3 }) });
  const axiosBare = axios.create();
  return {
    'bare fetch': () => bareFetch(url).then((r) => r.text()),
    'withRetry(fetch)': () => retryingFetch(url).then((r) => r.text()),
    'bare undici Agent': () => request(url, { dispatcher: undiciBare }).then((r) => r.body.text()),
    'undici interceptors.retry': () => request(url, { dispatcher: undiciPeer }).then((r) => r.body.text()),
    'herdless/undici retryInterceptor': () => request(url, { dispatcher: undiciHerdless }).then((r) => r.body.text()),
    'bare axios': () => axiosBare.get(url).then((r) => r.data),
    'axios-retry': () => axiosPeer.get(url).then((r) => r.data),
    'herdless/axios retryAdapter': () => axiosHerdless.get(url).then((r) => r.data),
  };
}
