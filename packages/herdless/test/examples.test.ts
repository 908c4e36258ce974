import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// Every file in examples/ runs as a user would run it (against the built package; the lab's global
// setup builds it), and prints what it promises.
const dir = fileURLToPath(new URL('../../../examples/', import.meta.url));
const run = async (file: string): Promise<string> => (await promisify(execFile)(process.execPath, [dir + file], { cwd: dir, timeout: 300_000 })).stdout;

const expected: Record<string, RegExp[]> = {
  // Two Retry-After waits of 1 s: at least 2.0 s. No upper bound: a busy machine only adds to it.
  'fetch.mjs': [/^status 200 after 3 attempts in (?:[2-9]|[1-9]\d+)\.\d s$/m, /^the same idempotency key on every attempt: true$/m],
  'retry.mjs': [/^stock 7 after 3 attempts$/m, /^gave up: reason fatal, attempts 1$/m],
  'breaker.mjs': [/^call 1: exhausted; breaker open; requests sent so far 3$/m, /^call 3: circuit-open; breaker open; requests sent so far 3$/m],
  'budgets.mjs': [/^20 calls, 23 requests \(without a budget: 80\); tokens left 0$/m, /^why calls stopped: exhausted 1, budget 19$/m],
  'grpc.mjs': [
    /^flaky: hello flaky after 3 attempts; waits (8\d|9\d|1[01]\d|120) ms, (1[6-9]\d|2[0-3]\d|240) ms$/m,
    /^pushback: hello pushback after 2 attempts; waits 300 ms \(pushback\)$/m,
    /^invalid: INVALID_ARGUMENT after 1 attempt$/m,
  ],
  'otel.mjs': [
    /^GET \/flaky: 200$/m,
    /^GET \/down: 503$/m,
    /^server saw 6 requests; herdless\.attempts 6, herdless\.retries 4, herdless\.give_ups 1$/m,
    /^6 spans: resend_count 0, 1, 2, 0, 1, 2; statuses 503, 503, 200, 503, 503, 503$/m,
  ],
  'size-a-budget.mjs': [/^maxTokens 10 +load during the outage 1\.01x, back to normal at 15\.0 s$/m, /^maxTokens 1000 +load during the outage 2\.\d\dx/m],
};

/** Examples with a test file of their own. */
const testedElsewhere = ['three-services.mjs']; // example-three-services.test.ts

describe('examples/', () => {
  it('every example is run by a test', () => {
    expect(readdirSync(dir).filter((f) => f.endsWith('.mjs')).sort()).toEqual([...Object.keys(expected), ...testedElsewhere].sort());
  });
  it.each(Object.entries(expected))('%s runs and prints what it promises', async (file, patterns) => {
    const out = await run(file);
    for (const p of patterns) expect(out).toMatch(p);
  });
});
