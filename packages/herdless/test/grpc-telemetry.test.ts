// The gRPC layer reports through the shared event model: a real grpc-js server, the interceptor's telemetry.
import * as grpc from '@grpc/grpc-js';
import { grpcRetryInterceptor } from 'herdless/grpc-js';
import type { TelemetryEvent } from 'herdless';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FlakyClient, startFlakyServer, type FlakyClientInstance, type FlakyServer, type Outcome } from './support/grpc-server.js';

const UNAVAILABLE = grpc.status.UNAVAILABLE;
let server: FlakyServer;
let client: FlakyClientInstance;
let events: TelemetryEvent[];
beforeEach(async () => {
  server = await startFlakyServer();
  events = [];
  const target = `127.0.0.1:${server.port}`;
  // Full jitter drawing 0: every backoff wait is 0 ms.
  const interceptor = grpcRetryInterceptor({ target, maxAttempts: 3, random: { random: () => 0 }, telemetry: { onEvent: (e) => void events.push(e) } });
  client = new FlakyClient(target, grpc.credentials.createInsecure(), { 'grpc.enable_retries': 0, interceptors: [interceptor] }) as FlakyClientInstance;
});
afterEach(async () => {
  client.close();
  await server.close();
});

function trace(): string[] {
  return events.map((e) => {
    if (e.type === 'attempt-start') return `start ${e.attempt}`;
    if (e.type === 'attempt-end') return `end ${e.attempt} ${e.outcome} ${e.status}`;
    if (e.type === 'retry') return `retry ${e.attempt} ${e.delayMs}ms ${e.delaySource}`;
    if (e.type === 'give-up') return `give-up ${e.reason} ${e.attempts} ${e.status}`;
    return e.type;
  });
}

let ids = 0;
const unary = (script: Outcome[]): Promise<grpc.ServiceError | null> =>
  new Promise((resolve) => client.unary({ id: `t-${++ids}`, script }, {}, (error) => resolve(error)));

describe('grpc-js interceptor telemetry', () => {
  it('UNAVAILABLE, UNAVAILABLE with pushback 0, OK: attempts with their status codes, a backoff and a pushback retry', async () => {
    expect(await unary([{ code: UNAVAILABLE }, { code: UNAVAILABLE, pushback: '0' }, { ok: true }])).toBeNull();
    expect(trace()).toEqual(['start 1', 'end 1 failure 14', 'retry 1 0ms backoff', 'start 2', 'end 2 failure 14', 'retry 2 0ms pushback', 'start 3', 'end 3 success 0']);
    const call = (events[0] as { call: object }).call;
    expect(call).toEqual({ layer: 'grpc', client: 'grpc-js', method: '/test.Flaky/Unary' });
    expect(server.arrivals).toHaveLength(3);
  });

  it('exhausted: the give-up carries the last status code', async () => {
    expect((await unary([{ code: UNAVAILABLE }]))?.code).toBe(UNAVAILABLE);
    expect(trace().slice(-2)).toEqual(['end 3 failure 14', 'give-up exhausted 3 14']);
    expect(events.filter((e) => e.type === 'attempt-start')).toHaveLength(server.arrivals.length);
  });
});
