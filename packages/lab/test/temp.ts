import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/*
 * Temporary folders for one test file, removed when the file's tests end: `npm test` leaves the
 * temp directory as it found it. Importing this module registers the clean-up for the importing
 * file (vitest collects a file's hooks while it is imported).
 */

const made: string[] = [];

afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** A new empty folder under the system's temp directory, removed after this file's tests. */
export function tempDir(prefix = 'herdless-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
