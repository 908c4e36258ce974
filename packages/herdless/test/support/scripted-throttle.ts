/** Test doubles for adaptive throttling: a throttle whose answers a test decides. */
import type { AttemptThrottle, Rng } from 'herdless';

/** An `AttemptThrottle` that admits as `script` says (in order; then everything), recording what it was asked (`isRetry`) and told (`accepted`). */
export interface ScriptedThrottle extends AttemptThrottle {
  /** The admissions still to come; push to script the next attempts. */
  readonly script: boolean[];
  /** `isRetry` of every attempt asked about, in order. */
  readonly asked: boolean[];
  /** `accepted` of every answer reported, in order. */
  readonly told: boolean[];
  /** Clears what was asked and told, and scripts the next admissions. */
  reset(script?: readonly boolean[]): void;
}

export function scriptedThrottle(script: readonly boolean[] = []): ScriptedThrottle {
  const t = {
    name: 'scripted',
    script: [...script],
    asked: [] as boolean[],
    told: [] as boolean[],
    admit: (_now: number, _rng: Rng, isRetry: boolean): boolean => (t.asked.push(isRetry), t.script.shift() ?? true),
    onAnswer: (_now: number, accepted: boolean): void => void t.told.push(accepted),
    reset(next: readonly boolean[] = []): void {
      t.script.splice(0, t.script.length, ...next);
      t.asked.length = 0;
      t.told.length = 0;
    },
  };
  return t;
}
