import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseConfig, type LabConfig } from './config.js';
import { UsageError } from './usage-error.js';

/**
 * Reads and validates a scenario file.
 * @throws UsageError `--config FILE: path.to.field <requirement>, got <value>` for any problem,
 *   including a missing or unreadable file and invalid JSON.
 */
export function loadConfig(file: string): LabConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`--config ${JSON.stringify(file)}: ${code === 'ENOENT' ? 'no such file' : `cannot read it (${code ?? String(error)})`}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--config ${JSON.stringify(file)}: not valid JSON (${(error as Error).message})`);
  }
  const config = parseConfig(json, `--config ${JSON.stringify(file)}`);
  // An unnamed scenario is called after its file.
  return (json as { name?: unknown }).name === undefined ? { ...config, name: basename(file) } : config;
}

