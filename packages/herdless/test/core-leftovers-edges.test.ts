import { describe, expect, it } from 'vitest';
import {
  CircuitBreaker,
  HerdlessError,
  InvalidOptionError,
  ManualClock,
  constantBackoff,
  fullJitterBackoff,
  isHerdlessError,
  isInvalidOptionError,
  retry,
  type RetryEvent,
} from 'herdless';
import { backoffFromSpec } from 'herdless/sim';

describe('an injected Rng: a value without a random() method is reported by the option check, not wrapped', () => {
  it.each([
    ['a number', 5, 'got 5'],
    ['null', null, 'got null'],
    ['an object without random', {}, 'got an object (Object)'],
    ['an object whose random is not a function', { random: 5 }, 'got an object (Object)'],
    ['a function with a random method', Object.assign(() => 0.5, { random: () => 0.5 }), 'got a function'],
  ])('CircuitBreaker random: %s is an InvalidOptionError', (_, rng, got) => {
    expect(() => new CircuitBreaker({ random: rng as never })).toThrow(
      new InvalidOptionError('circuitBreaker', 'random', rng, 'must be an object with a random() method'),
    );
    expect(() => new CircuitBreaker({ random: rng as never })).toThrow(`circuitBreaker: random must be an object with a random() method, ${got}`);
  });

  it('a draw of exactly 0 is in [0, 1): accepted, and full jitter waits 0 ms', async () => {
    const clock = new ManualClock();
    const retries: RetryEvent[] = [];
    const result = retry(
      ({ attempt }) => {
        if (attempt === 1) throw Object.assign(new Error('unavailable'), { status: 503 });
        return 'ok';
      },
      { clock, random: { random: () => 0 }, backoff: fullJitterBackoff({ initialBackoffMs: 100 }), onRetry: (e) => void retries.push(e) },
    );
    await clock.runAll();
    await expect(result).resolves.toBe('ok');
    expect(retries.map((e) => e.delayMs)).toEqual([0]);
  });
});

describe('fromSpec (backoffFromSpec): the messages name the kinds and the allowed fields', () => {
  it('an unknown kind lists every kind, quoted and comma-separated', () => {
    expect(() => backoffFromSpec({ kind: 'nope' })).toThrow(
      'backoffFromSpec: backoff.kind must be one of "constant", "exponential", "full jitter", "equal jitter", "proportional jitter", "decorrelated jitter", "decorrelated jitter v2", got "nope"',
    );
    expect(() => backoffFromSpec({ kind: 5 }, 'policy.backoff')).toThrow(/^backoffFromSpec: policy\.backoff\.kind must be one of "constant", .*, got 5$/);
  });

  it('an unknown field names the kind and its allowed fields', () => {
    expect(() => backoffFromSpec({ kind: 'exponential', initialMs: 5 })).toThrow(
      'backoffFromSpec: backoff.initialMs is not an option of "exponential" (check the spelling; options: initialBackoffMs, backoffMultiplier, maxBackoffMs), got 5',
    );
  });

  it('an error that is not an option error passes through unchanged (not re-issued with the path)', () => {
    const failure = new TypeError('no tag');
    // Describing this value for the option error throws: that error, not an option error, is what the caller gets.
    const hostile = {
      get [Symbol.toStringTag](): string {
        throw failure;
      },
    };
    let thrown: unknown;
    try {
      backoffFromSpec({ kind: 'constant', delayMs: hostile });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBe(failure);
    expect(isInvalidOptionError(thrown)).toBe(false);
  });
});

describe('HerdlessError and isHerdlessError', () => {
  it('a HerdlessError is named HerdlessError', () => {
    const e = new HerdlessError('ERR_X', 'boom');
    expect(e.name).toBe('HerdlessError');
    expect(String(e)).toBe('HerdlessError: boom');
  });

  it('isHerdlessError without a code is true for any herdless error, whatever its code', () => {
    expect(isHerdlessError(new HerdlessError('ERR_X', 'boom'))).toBe(true);
    expect(isHerdlessError(new InvalidOptionError('o', 'f', 1, 'must be 2'))).toBe(true);
    expect(isHerdlessError(new Error('boom'))).toBe(false);
  });
});

describe('an option error quotes a string value safely: at most 60 characters, terminal controls escaped', () => {
  const message = (value: unknown): string => new InvalidOptionError('o', 'f', value, 'must be x').message;

  it('60 characters are quoted whole; 61 are cut to 57 and "..."', () => {
    expect(message('a'.repeat(60))).toBe(`o: f must be x, got "${'a'.repeat(60)}"`);
    expect(message('a'.repeat(59) + 'bc')).toBe(`o: f must be x, got "${'a'.repeat(57)}..."`);
  });

  it('DEL, C1 controls and bidi overrides are written as \\u escapes of four hex digits', () => {
    expect(message('a\u007fb\u009bc\u202ed')).toBe('o: f must be x, got "a\\u007fb\\u009bc\\u202ed"');
  });
});

describe('objectOption: only own keys are options', () => {
  it('an inherited key is not checked as a misspelled option (constantBackoff(Object.create({ typo: 1 })))', () => {
    const b = constantBackoff(Object.create({ typo: 1 }) as never);
    expect(b.delay(1, 0, { random: () => 0.5 })).toBe(0);
    expect(() => constantBackoff({ typo: 1 } as never)).toThrow('constantBackoff: typo is not an option of constantBackoff');
  });
});
