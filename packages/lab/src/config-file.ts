import { basename } from 'node:path';
import { parseConfig, type LabConfig } from './config.js';
import { readJsonFile } from './json-file.js';
import { describePath, userPath } from './paths.js';

/**
 * Reads and validates a scenario file; a relative `file` is resolved against the folder the command
 * was started from (see `invocationDir`).
 * @throws UsageError `--config FILE: path.to.field <requirement>, got <value>` for any problem,
 *   including a missing, unreadable (naming its absolute path), oversized, non-UTF-8 or too deeply
 *   nested file and invalid JSON.
 */
export function loadConfig(file: string): LabConfig {
  const where = userPath('--config', file);
  const json = readJsonFile(where.path, describePath(where));
  const config = parseConfig(json, `--config ${JSON.stringify(file)}`);
  // An unnamed scenario is called after its file.
  return (json as { name?: unknown }).name === undefined ? { ...config, name: basename(file) } : config;
}

