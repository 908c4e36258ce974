import { basename } from 'node:path';
import { parseConfig, type LabConfig } from './config.js';
import { readJsonFile } from './json-file.js';

/**
 * Reads and validates a scenario file.
 * @throws UsageError `--config FILE: path.to.field <requirement>, got <value>` for any problem,
 *   including a missing, unreadable, oversized, non-UTF-8 or too deeply nested file and invalid JSON.
 */
export function loadConfig(file: string): LabConfig {
  const json = readJsonFile(file, `--config ${JSON.stringify(file)}`);
  const config = parseConfig(json, `--config ${JSON.stringify(file)}`);
  // An unnamed scenario is called after its file.
  return (json as { name?: unknown }).name === undefined ? { ...config, name: basename(file) } : config;
}

