/**
 * herdless/fastify and herdless/hono against the real frameworks: a route held open fills the one
 * slot, the next request is shed (503, Retry-After, "don't retry" when it is a retry), the slot is
 * free again once the route answered, and a downstream give-up goes on with the mark.
 */
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { RetryError } from 'herdless';
import { fastifyLoadShedder } from 'herdless/fastify';
import { honoLoadShedder } from 'herdless/hono';
import { PyRandom } from 'herdless/sim';

/** A promise the test opens when it likes. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('herdless/fastify', () => {
  it('sheds past maxInFlight with 503 + Retry-After, marks a shed retry, and frees the slot when the route answered', async () => {
    const app = Fastify();
    closers.push(() => app.close());
    await app.register(fastifyLoadShedder, { maxInFlight: 1, random: new PyRandom(1) });
    const held = gate();
    app.get('/slow', async () => {
      await held.wait;
      return 'slow done';
    });
    app.get('/fast', async () => 'fast');
    const origin = await app.listen({ host: '127.0.0.1', port: 0 });
    const slow = fetch(`${origin}/slow`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(app.loadShedder.stats().inFlight).toBe(1);
    const shed = await fetch(`${origin}/fast`);
    expect(shed.status).toBe(503);
    expect(['1', '2']).toContain(shed.headers.get('retry-after'));
    expect(shed.headers.get('x-herdless-retry')).toBeNull();
    expect(await shed.text()).toBe('overloaded\n');
    const retry = await fetch(`${origin}/fast`, { headers: { 'x-herdless-attempt': '2' } });
    expect(retry.status).toBe(503);
    expect(retry.headers.get('x-herdless-retry')).toBe('no');
    held.open();
    expect(await (await slow).text()).toBe('slow done');
    const after = await fetch(`${origin}/fast`);
    expect([after.status, await after.text()]).toEqual([200, 'fast']);
    expect(app.loadShedder.stats()).toMatchObject({ inFlight: 0, admitted: 2, shed: 2, shedDoNotRetry: 1 });
  });

  it('refuses bad options when registered, naming the field', async () => {
    const app = Fastify();
    closers.push(() => app.close());
    await expect(app.register(fastifyLoadShedder, { maxInFlight: 0 })).rejects.toThrow(/maxInFlight/);
  });
});

describe('herdless/hono', () => {
  it('sheds past maxInFlight, marks a shed retry, frees the slot, and passes a downstream give-up on with the mark', async () => {
    const app = new Hono();
    const shedding = honoLoadShedder({ maxInFlight: 1, random: new PyRandom(1) });
    app.use('*', shedding);
    app.onError((_error, c) => c.text('internal', 500)); // quiet: Hono's default logs the error
    const held = gate();
    app.get('/slow', async (c) => {
      await held.wait;
      return c.text('slow done');
    });
    app.get('/fast', (c) => c.text('fast'));
    app.get('/downstream', () => {
      throw new RetryError('exhausted', 3, Object.assign(new Error('HTTP 502'), { status: 502 }), 'all 3 attempts failed');
    });
    const slow = app.request('/slow');
    await new Promise((resolve) => setTimeout(resolve, 10));
    const shed = await app.request('/fast');
    expect(shed.status).toBe(503);
    expect(['1', '2']).toContain(shed.headers.get('retry-after'));
    expect(shed.headers.get('x-herdless-retry')).toBeNull();
    const retry = await app.request('/fast', { headers: { 'x-herdless-attempt': '3' } });
    expect(retry.headers.get('x-herdless-retry')).toBe('no');
    held.open();
    expect(await (await slow).text()).toBe('slow done');
    expect(await (await app.request('/fast')).text()).toBe('fast');
    const gaveUp = await app.request('/downstream');
    expect(gaveUp.status).toBe(502);
    expect(gaveUp.headers.get('x-herdless-retry')).toBe('no');
    expect(shedding.shedder.stats()).toMatchObject({ inFlight: 0, admitted: 3, shed: 2, givenUp: 1 });
  });

  it('an ordinary route failure stays Hono\'s 500', async () => {
    const app = new Hono();
    app.use('*', honoLoadShedder({ maxInFlight: 4 }));
    app.get('/bug', () => {
      throw new TypeError('bug');
    });
    app.onError((_error, c) => c.text('internal', 500));
    const r = await app.request('/bug');
    expect([r.status, await r.text(), r.headers.get('x-herdless-retry')]).toEqual([500, 'internal', null]);
  });

  it('refuses bad options at once, naming the field', () => {
    expect(() => honoLoadShedder({ maxInFlight: 1.5 })).toThrow(/maxInFlight/);
  });
});
