import { InvalidArgumentError, Option } from 'commander';
import { closestName } from '../closest.js';
import { parseSeeds } from '../seeds.js';
import { quote } from '../text.js';
import { UsageError } from '../usage-error.js';

/**
 * The name of `allowed` that `word` stands for: itself, or the one name it spells with other
 * letter case (`lifo` → `LIFO`, `Full Jitter` → `full jitter`). The lab's names are words a user
 * types from memory or from the docs' prose, where case varies; no two of a list differ by case
 * alone, so reading them case-insensitively can never pick the wrong one. `undefined` when none.
 */
export function canonicalName<N extends string>(word: string, allowed: readonly N[]): N | undefined {
  const exact = allowed.find((name) => name === word);
  if (exact !== undefined) return exact;
  const folded = allowed.filter((name) => name.toLowerCase() === word.toLowerCase());
  // Two names that differ only by case (a scenario file may have them): then only the exact one is meant.
  return folded.length === 1 ? folded[0] : undefined;
}

/** ` (did you mean LIFO? choose from …)`, or ` (choose from …)` when no name is close; `lead` replaces `choose from`. */
export function suggestion(word: string, allowed: readonly string[], lead = 'choose from'): string {
  const near = closestName(word, allowed);
  return ` (${near === undefined ? '' : `did you mean ${near}? `}${lead} ${allowed.join(', ')})`;
}

/**
 * A comma-separated list of names from `allowed`, each at most once, letter case ignored
 * ({@link canonicalName}); returned as `allowed` spells them.
 * @throws UsageError naming the flag, the unknown name and the closest known one.
 */
export function parseNames<N extends string>(flag: string, noun: string, text: string, allowed: readonly N[]): N[] {
  const names = text.split(',').map((s) => {
    const word = s.trim();
    const name = canonicalName(word, allowed);
    if (name === undefined) throw new UsageError(`${flag} ${quote(text)}: unknown ${noun} ${quote(word)}${suggestion(word, allowed)}`);
    return name;
  });
  if (new Set(names).size !== names.length) throw new UsageError(`${flag} ${quote(text)}: a ${noun} is listed twice`);
  return names;
}

/**
 * An option that takes one of `choices`, read as {@link parseNames} reads names: `--format JSON` is
 * `--format json`, and `--format jsn` says "did you mean json?". The help lists the choices as
 * commander's `.choices()` does.
 */
export function choiceOption<C extends string>(flags: string, description: string, choices: readonly C[], defaultValue?: C): Option {
  const option = new Option(flags, description).choices(choices);
  option.argParser((value: string): C => {
    const name = canonicalName(value.trim(), choices);
    if (name === undefined) {
      const near = closestName(value.trim(), choices);
      throw new InvalidArgumentError(`${near === undefined ? '' : `Did you mean ${near}? `}Allowed choices are ${choices.join(', ')}.`);
    }
    return name;
  });
  return defaultValue === undefined ? option : option.default(defaultValue);
}

/**
 * An option whose value is text the command reads itself (a port, a count, a seed list, a folder),
 * with its default given as that text: the help shows the default as one would type it,
 * `(default: 0)`, where commander would print the string `"0"` and suggest a string were meant.
 */
export function textOption(flags: string, description: string, defaultText: string): Option {
  return new Option(flags, description).default(defaultText, defaultText);
}

/**
 * `--seeds` of a command that runs one seed (`waits`, the live runs): one seed, an integer from 0 to
 * 2^53 − 1 as in every seed list; a list or range is refused with what to give instead.
 * @throws UsageError naming `--seeds` and the value.
 */
export function parseOneSeed(text: string, why: string): number {
  const seeds = parseSeeds(text);
  if (seeds.length !== 1) throw new UsageError(`--seeds ${quote(text)}: ${why}: give one seed, e.g. --seeds ${seeds[0]}`);
  return seeds[0]!;
}

/**
 * `--trace SEED` (budget, fleet, metastable): the one seed whose series are printed. `--seeds` beside
 * it is welcome when it names that same seed (`--trace 0 --seeds 0`: nothing is lost); any other
 * seed list is refused with what to type, since the trace would run none of it.
 * @throws UsageError naming `--trace` (not one seed) or `--seeds` (other seeds than the trace's).
 */
export function traceSeedOf(trace: string, seedsText: string | undefined): number {
  let seeds: number[];
  try {
    seeds = parseSeeds(trace, '--trace');
  } catch (error) {
    // Not a seed at all: say what one is, rather than --seeds's hint of ranges and lists.
    if (error instanceof UsageError) throw new UsageError(`--trace ${quote(trace)}: expected one seed, an integer from 0 to ${Number.MAX_SAFE_INTEGER}`);
    throw error;
  }
  if (seeds.length !== 1) throw new UsageError(`--trace ${quote(trace)}: give one seed`);
  const seed = seeds[0]!;
  if (seedsText !== undefined) {
    const listed = parseSeeds(seedsText);
    if (listed.length !== 1 || listed[0] !== seed) {
      const instead = listed.length === 1 ? `give --trace ${listed[0]} to trace seed ${listed[0]}` : `drop --trace to run seeds ${seedsText.trim()}`;
      throw new UsageError(`--seeds ${quote(seedsText)}: --trace ${quote(trace)} traces seed ${seed} alone (a trace is one seed's series): drop --seeds to trace seed ${seed}, or ${instead}`);
    }
  }
  return seed;
}

/** The output formats of the commands that print a table: the table, its JSON document, its CSV. */
export const FORMATS = ['table', 'json', 'csv'] as const;
