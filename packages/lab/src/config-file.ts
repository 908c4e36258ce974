import { basename } from 'node:path';
import { parseConfig, type LabConfig } from './config.js';
import { describePath, readUserFile, userPath } from './paths.js';
import { UsageError } from './usage-error.js';

/**
 * Reads and validates a scenario file; a relative `file` is resolved against the folder the command
 * was started from (see `invocationDir`).
 * @throws UsageError `--config FILE: path.to.field <requirement>, got <value>` for any problem,
 *   including a missing or unreadable file (naming its absolute path) and invalid JSON.
 */
export function loadConfig(file: string): LabConfig {
  const where = userPath('--config', file);
  const text = readUserFile(where);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${describePath(where)}: not valid JSON (${(error as Error).message})`);
  }
  const config = parseConfig(json, `--config ${JSON.stringify(file)}`);
  // An unnamed scenario is called after its file.
  return (json as { name?: unknown }).name === undefined ? { ...config, name: basename(file) } : config;
}

