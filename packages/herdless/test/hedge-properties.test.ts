import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock, hedge, isHedgeError, isRetryError, retryThrottlingBudget, type HedgeContext, type Rng, type TelemetryEvent } from 'herdless';

/** One attempt's script: answer after `ms`, with a value, a transient failure (503) or a fatal one (404). */
const attemptScript = fc.record({ ms: fc.integer({ min: 0, max: 300 }), outcome: fc.constantFrom('ok', 'transient', 'fatal') });

describe('hedge() invariants (fast-check, virtual time)', () => {
  it('settles exactly once, sends at most maxAttempts, aborts every loser, never hedges after a success, and leaves no timer', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(attemptScript, { minLength: 10, maxLength: 10 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 0, max: 200 }),
        fc.boolean(),
        async (scripts, maxAttempts, delayMs, budgeted) => {
          const clock = new ManualClock();
          const started: number[] = [];
          const ended = new Map<number, 'answered' | 'aborted'>();
          let firstSuccessAt = Infinity;
          const op = ({ attempt, signal }: HedgeContext): Promise<number> =>
            new Promise((resolve, reject) => {
              started.push(clock.now());
              const { ms, outcome } = scripts[attempt - 1]!;
              const handle = clock.setTimeout(() => {
                ended.set(attempt, 'answered');
                if (outcome === 'ok') {
                  firstSuccessAt = Math.min(firstSuccessAt, clock.now());
                  resolve(attempt);
                } else reject(Object.assign(new Error(outcome), { status: outcome === 'transient' ? 503 : 404 }));
              }, ms);
              signal.addEventListener('abort', () => {
                clock.clearTimeout(handle);
                ended.set(attempt, 'aborted');
                reject(signal.reason);
              });
            });
          const events: TelemetryEvent[] = [];
          let settlements = 0;
          let outcome: { value?: number; error?: unknown } | undefined;
          const budget = budgeted ? retryThrottlingBudget({ maxTokens: 3, tokenRatio: 0.5 }) : undefined;
          hedge(op, { maxAttempts, delayMs, clock, budget, telemetry: { onEvent: (e) => void events.push(e) } }).then(
            (value) => ((settlements += 1), (outcome = { value })),
            (error: unknown) => ((settlements += 1), (outcome = { error })),
          );
          for (let i = 0; i < 5000 && clock.pending > 0; i++) await clock.advance(1);
          await clock.advance(0);
          expect(settlements).toBe(1);
          expect(started.length).toBeGreaterThanOrEqual(1);
          expect(started.length).toBeLessThanOrEqual(maxAttempts);
          // No attempt starts after the first success.
          for (const at of started) expect(at).toBeLessThanOrEqual(firstSuccessAt);
          // Every attempt ended: answered, or aborted by the call.
          expect(ended.size).toBe(started.length);
          expect(clock.pending).toBe(0);
          if (outcome!.value !== undefined) {
            expect(scripts[outcome!.value - 1]!.outcome).toBe('ok');
          } else {
            expect(isRetryError(outcome!.error)).toBe(true);
          }
          // Telemetry: one attempt-start per attempt, one hedge event per attempt beyond the first.
          expect(events.filter((e) => e.type === 'attempt-start')).toHaveLength(started.length);
          expect(events.filter((e) => e.type === 'hedge')).toHaveLength(started.length - 1);
          if (budget !== undefined) {
            expect(budget.tokens).toBeGreaterThanOrEqual(0);
            expect(budget.tokens).toBeLessThanOrEqual(3);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('with a throttle: every attempt sent was admitted first; a refusal sends nothing and ends hedging; one answer per answered attempt', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(attemptScript, { minLength: 10, maxLength: 10 }),
        fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 0, max: 200 }),
        async (scripts, admits, maxAttempts, delayMs) => {
          const clock = new ManualClock();
          const log: string[] = [];
          let answered = 0;
          const told: boolean[] = [];
          const throttle = {
            name: 'scripted',
            admit: (_now: number, _rng: Rng, isRetry: boolean) => {
              const yes = admits[log.filter((e) => e.startsWith('ask')).length]!;
              log.push(`ask:${isRetry ? 'hedge' : 'first'}:${yes}`);
              return yes;
            },
            onAnswer: (_now: number, accepted: boolean) => void told.push(accepted),
          };
          const op = ({ attempt, signal }: HedgeContext): Promise<number> =>
            new Promise((resolve, reject) => {
              log.push(`send:${attempt}`);
              const { ms, outcome } = scripts[attempt - 1]!;
              const handle = clock.setTimeout(() => {
                answered++;
                if (outcome === 'ok') resolve(attempt);
                else reject(Object.assign(new Error(outcome), { status: outcome === 'transient' ? 503 : 404 }));
              }, ms);
              signal.addEventListener('abort', () => {
                clock.clearTimeout(handle);
                reject(signal.reason);
              });
            });
          let outcome: { value?: number; error?: unknown } | undefined;
          hedge(op, { maxAttempts, delayMs, clock, throttle }).then(
            (value) => (outcome = { value }),
            (error: unknown) => (outcome = { error }),
          );
          for (let i = 0; i < 5000 && clock.pending > 0; i++) await clock.advance(1);
          await clock.advance(0);
          expect(outcome).toBeDefined();
          // Every send comes right after an admission; a refusal is the last question, and nothing follows it.
          const asks = log.filter((e) => e.startsWith('ask'));
          const sends = log.filter((e) => e.startsWith('send'));
          expect(sends.length).toBeLessThanOrEqual(maxAttempts);
          for (let i = 0; i < log.length; i++) {
            if (log[i]!.startsWith('send')) expect(log[i - 1]).toMatch(/^ask:.*:true$/);
            if (log[i]!.endsWith(':false')) expect(i).toBe(log.length - 1);
          }
          expect(asks.length - sends.length).toBeLessThanOrEqual(1);
          expect(asks[0]).toMatch(/^ask:first:/);
          for (const ask of asks.slice(1)) expect(ask).toMatch(/^ask:hedge:/);
          // A refused first try: the call ends unsent.
          if (asks[0]!.endsWith(':false')) {
            expect(sends).toHaveLength(0);
            expect(isHedgeError(outcome!.error) && [outcome!.error.reason, outcome!.error.attempts]).toEqual(['throttled', 0]);
          }
          // Answers: at most one per attempt the backend answered; aborted losers report nothing.
          expect(told.length).toBeLessThanOrEqual(answered);
          expect(clock.pending).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  });
});
