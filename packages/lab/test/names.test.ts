import { describe, expect, it } from 'vitest';
import { BUDGET_POLICIES, HEDGING_POLICIES, METASTABLE_POLICIES } from 'herdless/sim';
import { closestName } from '../src/closest.js';
import { canonicalName, parseNames, parseOneSeed } from '../src/cli/names.js';
import { UsageError } from '../src/usage-error.js';

const SERVERS = ['FIFO', 'LIFO', 'drop expired', 'shedding'] as const;

/** The message of the UsageError `fn` throws. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error('expected a UsageError');
}

describe('canonicalName: a name the user typed, as the lab spells it', () => {
  it.each<[string, string | undefined]>([
    ['LIFO', 'LIFO'],
    ['lifo', 'LIFO'],
    ['Drop Expired', 'drop expired'],
    ['lfo', undefined], // a typo is not a name (parseNames suggests it)
    ['drop  expired', undefined],
  ])('%j → %j', (word, expected) => {
    expect(canonicalName(word, SERVERS)).toBe(expected);
  });

  it('two names that differ only in case (a scenario file may have them): only the exact one is meant', () => {
    expect(canonicalName('fast', ['Fast', 'fast'])).toBe('fast');
    expect(canonicalName('Fast', ['Fast', 'fast'])).toBe('Fast');
    expect(canonicalName('FAST', ['Fast', 'fast'])).toBeUndefined();
  });
});

describe('parseNames', () => {
  it('returns the names as the lab spells them, in the order given', () => {
    expect(parseNames('--servers', 'server', 'shedding, lifo ,Fifo', SERVERS)).toEqual(['shedding', 'LIFO', 'FIFO']);
  });

  it('a typo names the closest name and every name; nothing close, every name only', () => {
    expect(refusal(() => parseNames('--servers', 'server', 'FIFO,lfo', SERVERS))).toBe('--servers "FIFO,lfo": unknown server "lfo" (did you mean LIFO? choose from FIFO, LIFO, drop expired, shedding)');
    expect(refusal(() => parseNames('--servers', 'server', 'priority', SERVERS))).toBe('--servers "priority": unknown server "priority" (choose from FIFO, LIFO, drop expired, shedding)');
  });

  it('a name twice, in any case, is refused', () => {
    expect(refusal(() => parseNames('--servers', 'server', 'LIFO,lifo', SERVERS))).toBe('--servers "LIFO,lifo": a server is listed twice');
  });
});

describe('closestName: the name a typo most likely means', () => {
  const metastable = METASTABLE_POLICIES.map((p) => p.name);
  it.each<[string, readonly string[], string | undefined]>([
    // The count typed is kept: "3 retries" has both words, "no retry" (two edits nearer) only one.
    ['3 retry', metastable, '3 retries'],
    ['3 retriez', metastable, '3 retries'],
    ['no retyr', metastable, 'no retry'],
    ['no retries', BUDGET_POLICIES, 'no retry'],
    // A name holding every word typed is close however many words it adds.
    ['3 retries + budget', metastable, '3 retries + Finagle budget'],
    ['3 retries + quota', metastable, '3 retries + AWS retry quota'],
    ['4 attempts grpc', BUDGET_POLICIES, '4 attempts + gRPC throttling'],
    ['fixed delay budget', HEDGING_POLICIES, 'fixed delay + budget'],
    ['fixed budget', HEDGING_POLICIES, 'fixed delay + budget'],
    // "+" is a word of its own, written with spaces or without.
    ['3 retries+jitter', metastable, '3 retries + jitter'],
    ['3 retries + jiter', metastable, '3 retries + jitter'],
    ['5 attempts', BUDGET_POLICIES, '4 attempts'],
    // One word: edits and prefixes only, as before.
    ['lfo', SERVERS, 'LIFO'],
    ['horizon', ['horizonMs', 'timeoutMs'], 'horizonMs'],
    ['retry', metastable, undefined],
    ['three retries', metastable, undefined],
  ])('%j → %j', (typo, names, expected) => {
    expect(closestName(typo, names)).toBe(expected);
  });
});

describe('parseOneSeed', () => {
  it('one seed; a list or a range is refused with why and what to give', () => {
    expect(parseOneSeed('7', 'why')).toBe(7);
    expect(parseOneSeed(' 9007199254740991 ', 'why')).toBe(9007199254740991);
    expect(refusal(() => parseOneSeed('3-5', 'waits draws one'))).toBe('--seeds "3-5": waits draws one: give one seed, e.g. --seeds 3');
    expect(refusal(() => parseOneSeed('1,2', 'waits draws one'))).toBe('--seeds "1,2": waits draws one: give one seed, e.g. --seeds 1');
    expect(refusal(() => parseOneSeed('-1', 'waits draws one'))).toBe('--seeds "-1": "-1" is not a seed or a range (use 0-19 or 1,5,9)');
  });
});
