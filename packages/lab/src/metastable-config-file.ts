import { basename } from 'node:path';
import { readJsonFile } from './json-file.js';
import { parseMetastableConfig, type MetastableConfig } from './metastable-config.js';
import { describePath, userPath } from './paths.js';

/**
 * Reads and validates a metastable scenario file; a relative path is resolved against the folder
 * the command was started from.
 * @throws UsageError `--config FILE: field <requirement>, got <value>` for any problem.
 */
export function loadMetastableConfig(file: string): MetastableConfig {
  const where = userPath('--config', file);
  const json = readJsonFile(where.path, describePath(where));
  const config = parseMetastableConfig(json, `--config ${JSON.stringify(file)}`);
  if ((json as { name?: unknown }).name === undefined) config.settings = { ...config.settings, name: basename(file) };
  return config;
}
