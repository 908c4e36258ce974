import { describe, expect, it } from 'vitest';
import { SERVER_START_LIMIT_MS, startServerProcess } from '../src/live/target.js';
import { UsageError } from '../src/usage-error.js';
import { alive } from './lab-server.js';

/** The rejection of `promise`, which must reject. */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

// These start the compiled lab (dist/main.js): build first (`npx tsc -b packages/herdless packages/lab`).
describe('startServerProcess', () => {
  it('waits two minutes by default: a failsafe against a hang, not a speed limit for a loaded machine', () => {
    expect(SERVER_START_LIMIT_MS).toBe(120_000);
  });

  it('resolves with the address the lab server prints, and stop() ends it', async () => {
    const server = await startServerProcess([]);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(alive(server.pid)).toBe(true);
    await server.stop();
    expect(alive(server.pid)).toBe(false);
  }, 150_000);

  it('a server that prints no address within the limit: a UsageError saying so and what to try', async () => {
    // A silent stand-in that hangs: it never prints an address, so the limit (50 ms here) always
    // fires first, however slow the machine. Its output is then empty: the message says so rather
    // than ending in a dangling ": ". (What a server printed is quoted as in the test below.) The
    // advice gives the same server as a command to run by hand, an argument with a space quoted.
    const hang = [process.execPath, '-e', 'setInterval(() => {}, 1000)', '--'];
    const error = await rejection(startServerProcess(['--startup', '1', '--config', 'my scenario.json'], { limitMs: 50, command: hang }));
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toBe(
      'lab server (started for this live run) printed no address within 0.05 s, so the run was stopped (it printed nothing): ' +
        'the machine may be too loaded to start it: close other load and retry, or start `herdless-lab server --port 0 --startup 1 --config "my scenario.json"` yourself and pass the address it prints with --target',
    );
  });

  it('a server that exits first: a UsageError with its status and the end of its output', async () => {
    // The real lab server, refusing a flag: it prints its one-line error and exits with status 2.
    const error = await rejection(startServerProcess(['--model', 'bogus']));
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toMatch(
      /^lab server \(started for this live run\) exited before printing its address \(status 2; it printed: herdless-lab: option '--model <model>' argument 'bogus' is invalid\. Allowed choices are article, metastable\.\): run `herdless-lab server --port 0 --model bogus` to see why$/,
    );
  }, 150_000);

  it('a program that cannot be started: a UsageError naming why', async () => {
    const error = await rejection(startServerProcess([], { command: ['/nonexistent/herdless-lab'] }));
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toBe('lab server (started for this live run) could not be started (spawn /nonexistent/herdless-lab ENOENT)');
  });
});
