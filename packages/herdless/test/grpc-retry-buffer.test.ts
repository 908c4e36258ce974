// The retry buffer's accounting (gRFC A6, "Memory Management (Buffering)") and the Connect
// interceptor's replay of a request stream, without a server: the real-server tests
// (grpc-streams.test.ts) show the same rules through grpc-js and Connect.
import { describe, expect, it } from 'vitest';
import { ReplaySource } from '../src/connect/replay.js';
import { DEFAULT_PER_RPC_BUFFER_LIMIT, DEFAULT_RETRY_BUFFER_SIZE, RetryBufferPool } from '../src/grpc/retry-buffer.js';
import { grpcRetryPlanner } from '../src/grpc/interceptor-options.js';
import { a6ServiceConfig } from './support/grpc-server.js';

describe('RetryBufferPool', () => {
  it("has grpc-js's defaults: 1 MiB per call, 16 MiB in all", () => {
    expect([DEFAULT_PER_RPC_BUFFER_LIMIT, DEFAULT_RETRY_BUFFER_SIZE]).toEqual([1_048_576, 16_777_216]);
    const { buffers } = grpcRetryPlanner('test', { serviceConfig: a6ServiceConfig() });
    expect([buffers.perRpcBufferLimit, buffers.retryBufferSize]).toEqual([1_048_576, 16_777_216]);
  });

  it('holds a message only if both limits allow it, exactly at a limit included', () => {
    const pool = new RetryBufferPool(250, 100);
    const a = pool.call();
    expect(a.hold(60)).toBe(true);
    expect(a.hold(41)).toBe(false); // 101 > 100 for the call
    expect(a.hold(40)).toBe(true); // 100: at the limit
    expect([a.held, pool.used]).toEqual([100, 100]);
    const b = pool.call();
    expect(b.hold(100)).toBe(true);
    const c = pool.call();
    expect(c.hold(51)).toBe(false); // 251 > 250 in all
    expect(c.hold(50)).toBe(true);
    expect(pool.used).toBe(250);
    expect(c.hold(0)).toBe(true); // an empty message always fits
  });

  it('gives bytes back as messages are sent after a commit, and all at the end of a call', () => {
    const pool = new RetryBufferPool(1000, 1000);
    const a = pool.call();
    a.hold(300);
    a.hold(200);
    a.release(300);
    expect([a.held, pool.used]).toEqual([200, 200]);
    // Never more than the call holds: a double release cannot take another call's bytes.
    a.release(500);
    expect([a.held, pool.used]).toEqual([0, 0]);
    const b = pool.call();
    b.hold(700);
    b.releaseAll();
    b.releaseAll();
    expect([b.held, pool.used]).toEqual([0, 0]);
    expect(pool.call().hold(1000)).toBe(true);
  });

  it('a zero limit commits every call at its first non-empty message', () => {
    const pool = new RetryBufferPool(16, 0);
    expect(pool.call().hold(1)).toBe(false);
  });
});

async function* source(values: string[], failAt?: number): AsyncGenerator<string> {
  for (const [i, v] of values.entries()) {
    if (i === failAt) throw new Error('the application failed');
    yield v;
  }
}

async function drain(it: AsyncIterable<string>, max = Infinity): Promise<string[]> {
  const out: string[] = [];
  for await (const v of it) {
    out.push(v);
    if (out.length >= max) break;
  }
  return out;
}

describe('ReplaySource (Connect request streams)', () => {
  it('each attempt reads every message from the first, the application iterable is read once', async () => {
    let pulls = 0;
    async function* counted(): AsyncGenerator<string> {
      for (const v of ['a', 'b', 'c']) {
        pulls++;
        yield v;
      }
    }
    const pool = new RetryBufferPool(100, 100);
    const replay = new ReplaySource(counted(), pool.call(), (v) => v.length, () => undefined);
    expect(await drain(replay.attempt(), 2)).toEqual(['a', 'b']);
    expect(await drain(replay.attempt())).toEqual(['a', 'b', 'c']);
    expect(await drain(replay.attempt())).toEqual(['a', 'b', 'c']);
    expect(pulls).toBe(3);
    expect(pool.used).toBe(3);
  });

  it('an older attempt stops when a newer one starts', async () => {
    const replay = new ReplaySource(source(['a', 'b']), new RetryBufferPool(100, 100).call(), () => 1, () => undefined);
    const first = replay.attempt()[Symbol.asyncIterator]();
    expect(await first.next()).toEqual({ done: false, value: 'a' });
    const second = replay.attempt();
    expect(await first.next()).toEqual({ done: true, value: undefined });
    expect(await drain(second)).toEqual(['a', 'b']);
  });

  it('a message that does not fit commits: onOverflow once, and the newest attempt lets go of what it read', async () => {
    const pool = new RetryBufferPool(100, 5);
    let overflows = 0;
    const replay = new ReplaySource(source(['aa', 'bb', 'cc', 'dd']), pool.call(), (v) => v.length, () => overflows++);
    const it = replay.attempt()[Symbol.asyncIterator]();
    expect((await it.next()).value).toBe('aa');
    expect((await it.next()).value).toBe('bb');
    expect(pool.used).toBe(4);
    expect((await it.next()).value).toBe('cc'); // 6 > 5: committed; 'cc' is sent unbuffered
    expect(overflows).toBe(1);
    // Committed: what this attempt has read left the buffer.
    expect(pool.used).toBe(0);
    expect((await it.next()).value).toBe('dd');
    expect(await it.next()).toEqual({ done: true, value: undefined });
    expect(overflows).toBe(1);
  });

  it('commit() lets go at once of what the newest attempt has read; the rest goes as it is read', async () => {
    const pool = new RetryBufferPool(100, 100);
    const replay = new ReplaySource(source(['aa', 'bb', 'cc']), pool.call(), (v) => v.length, () => undefined);
    await drain(replay.attempt(), 3);
    const it = replay.attempt()[Symbol.asyncIterator]();
    await it.next();
    expect(pool.used).toBe(6);
    replay.commit();
    expect(pool.used).toBe(4);
    await it.next();
    expect(pool.used).toBe(2);
  });

  it("the application's failure reaches every attempt; close() gives everything back", async () => {
    const pool = new RetryBufferPool(100, 100);
    const replay = new ReplaySource(source(['a', 'b', 'c'], 1), pool.call(), () => 10, () => undefined);
    await expect(drain(replay.attempt())).rejects.toThrow('the application failed');
    await expect(drain(replay.attempt())).rejects.toThrow('the application failed');
    expect(pool.used).toBe(10);
    replay.close();
    expect(pool.used).toBe(0);
  });
});
