import { dirname, isAbsolute, resolve } from 'node:path';
import { UsageError } from './usage-error.js';

/*
 * Every file or folder a user names on the command line (`--config`, `--grpc-service-config`,
 * `--out`, …) is resolved here, against the folder the command was started from. `npm run lab`
 * runs the lab from the repository root, whatever folder the user typed it in; npm passes that
 * folder as INIT_CWD. Reading a same-named file at the root instead would be silently wrong, so
 * there is one rule, used by every flag, and every error names the absolute path it looked at
 * (`describePath`; the JSON inputs are then read by `readJsonFile` under that name).
 */

/**
 * The folder relative paths are resolved against: INIT_CWD when npm started this process for a
 * script (npm sets INIT_CWD to the folder it was run from and starts the script in the folder of
 * `npm_package_json`), else the current folder. A process started some other way — a test, a
 * shell, another tool — with a stale INIT_CWD inherited from an outer npm is in a different folder
 * than npm's package, so it keeps its own current folder.
 */
export function invocationDir(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string {
  const init = env.INIT_CWD;
  const pkg = env.npm_package_json;
  if (init && isAbsolute(init) && pkg && isAbsolute(pkg) && resolve(dirname(pkg)) === resolve(cwd)) return resolve(init);
  return cwd;
}

/** A path the user gave to a flag, as typed and resolved. */
export interface UserPath {
  /** The flag, e.g. `--config`. */
  flag: string;
  /** As typed. */
  given: string;
  /** Absolute, resolved against {@link invocationDir}. */
  path: string;
}

/**
 * Resolves a path given to `flag` against the folder the command was started from.
 * @throws UsageError when the text is empty.
 */
export function userPath(flag: string, given: string, base: string = invocationDir()): UserPath {
  if (given.trim() === '') throw new UsageError(`${flag} ${JSON.stringify(given)}: give a path`);
  return { flag, given, path: resolve(base, given) };
}

/** How errors name a user's path: `--config "s2.json" (/home/me/lab/s2.json)`, or just the flag and path when given absolute. */
export function describePath(p: UserPath): string {
  return p.given === p.path ? `${p.flag} ${JSON.stringify(p.given)}` : `${p.flag} ${JSON.stringify(p.given)} (${p.path})`;
}
