// The experiments' entry points in herdless/sim, called from JavaScript with a misspelt option or an
// unknown name: an InvalidOptionError naming the field and the value, at once — never a silent
// default (`runLayers({ dept: 5 })` ran depth 3) or a later message about a missing backoff.
import { describe, expect, it } from 'vitest';
import { budgetPolicy, budgetScenario, herdBackoff, herdScenario, runHerd, runLayers } from 'herdless/sim';
import { invalidOption } from './support/invalid-option.js';

describe('herdless/sim experiments: unknown names and options', () => {
  it.each([
    ['herdBackoff', () => herdBackoff('ful jitter' as never), 'herdBackoff: strategy must be one of immediate, fixed 1s, exponential, full jitter, equal jitter, decorrelated, got "ful jitter"'],
    ['runHerd', () => runHerd(['ful jitter' as never], [0]), 'herdBackoff: strategy must be one of immediate, fixed 1s, exponential, full jitter, equal jitter, decorrelated, got "ful jitter"'],
    ['herdScenario', () => herdScenario('full jitter', { spreed: 900 } as never), 'herdScenario: spreed is not an option of herdScenario (check the spelling; options: clients, spreadMs, horizonMs, server), got 900'],
    ['budgetPolicy', () => budgetPolicy('4 attempt' as never), 'budgetPolicy: name must be one of no retry, 4 attempts, 4 attempts + gRPC throttling, 4 attempts + 10% retry ratio, 4 attempts + 10% retry ratio (at decision), 4 attempts + Finagle budget, 4 attempts + AWS retry quota, 4 attempts + adaptive throttling, 4 attempts + ratio + adaptive throttling, got "4 attempt"'],
    ['budgetScenario', () => budgetScenario('no retry', { client: 5 } as never), 'budgetScenario: client is not an option of budgetScenario (did you mean clients? options: clients, ratePerSecond, outage, horizonMs), got 5'],
  ])('%s', (_name, call, message) => {
    expect(invalidOption(call).message).toBe(message);
  });

  it('runLayers: a misspelt option or options that are not an object reject', async () => {
    await expect(runLayers({ dept: 5 } as never)).rejects.toThrow('runLayers: dept is not an option of runLayers (did you mean depth? options: depth, attempts, seed), got 5');
    await expect(runLayers(null as never)).rejects.toThrow('runLayers: options must be an object, got null');
  });

  it('the known names and options still build the article’s scenarios', () => {
    expect(herdScenario('full jitter', { spreadMs: 900 }).arrivals).toEqual({ kind: 'together', spreadMs: 900 });
    expect(budgetScenario('4 attempts', { clients: 5 }).clients).toBe(5);
    expect(budgetPolicy('no retry').maxAttempts).toBe(1);
  });
});
