/**
 * A retried response's body is not read: a 503 with a 100 MB body, then a 200. Every client
 * (axios, fetch, undici) lets the big body go — drained up to a bound, or its stream destroyed or
 * cancelled — instead of holding it in memory and waiting for it. Each client runs in a process of
 * its own (test/support/big-body-client.mjs), so that its resident memory is measured alone.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type http from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopback, stopLoopback } from './support/loopback.js';

const CLIENT = fileURLToPath(new URL('./support/big-body-client.mjs', import.meta.url));
const BIG = 100 * 2 ** 20;
const CHUNK = Buffer.alloc(64 * 1024, 'x');

let server: http.Server;
let origin: string;
/** Bytes of the big body the server managed to write, per request. */
const written: number[] = [];
let bigRequests = 0;

beforeAll(async () => {
  ({ server, origin } = await startLoopback((req, res) => {
    req.resume();
    if (req.url === '/small') {
      res.end('small');
      return;
    }
    // Odd requests (each client's first attempt) get the 503 with the big body, even ones the 200.
    if (bigRequests++ % 2 === 1) {
      res.end('ok');
      return;
    }
    // No Content-Length (chunked): the client cannot tell the size in advance and must bound its reading.
    res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '0' });
    let sent = 0;
    const index = written.push(0) - 1;
    const pump = (): void => {
      while (sent < BIG && !res.destroyed) {
        sent += CHUNK.length;
        written[index] = sent;
        if (!res.write(CHUNK)) {
          res.once('drain', pump);
          return;
        }
      }
      if (!res.destroyed) res.end();
    };
    res.on('close', () => res.removeAllListeners('drain'));
    pump();
  }));
});

afterAll(async () => {
  await stopLoopback(server);
});

interface Report {
  status: number;
  body: string;
  ms: number;
  growthMb: number;
}

async function run(client: string): Promise<Report> {
  const child = spawn(process.execPath, ['--expose-gc', CLIENT, client, origin], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  expect(code).toBe(0);
  return JSON.parse(out) as Report;
}

describe('a 503 with a 100 MB body, then a 200', () => {
  // The figures the call must stay under: 2 s and 16 MB. Reading the body whole took 11.2 s and
  // 191 MB; letting it go takes about 0.1 s and 1–3 MB, so a machine 20 times slower still passes.
  it.each(['axios', 'fetch', 'undici'])('%s: the call returns the 200 in under 2 s with under 16 MB of RSS growth', async (client) => {
    const report = await run(client);
    console.info(`${client}: ${report.ms.toFixed(0)} ms, +${report.growthMb.toFixed(1)} MB RSS`);
    expect([report.status, report.body]).toEqual([200, 'ok']);
    expect(report.growthMb).toBeLessThan(16);
    expect(report.ms).toBeLessThan(2000);
    // The client stopped reading long before the end: the server wrote a small part of the 100 MB.
    expect(written.at(-1)!).toBeLessThan(BIG / 4);
  }, 60_000);
});
