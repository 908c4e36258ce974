import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { describePath, userPath } from '../paths.js';
import { UsageError } from '../usage-error.js';
import type { ReportFile } from './build.js';

/** The list of files the last report wrote, kept in the output folder so the next run can remove them. */
export const MANIFEST = '.herdless-report.json';

function isSafeRelative(path: string): boolean {
  return path !== '' && !path.startsWith('/') && !path.split('/').some((part) => part === '' || part === '.' || part === '..') && !path.includes('\\');
}

/**
 * Checks, before anything runs, that the report may be written to `dir` (relative to the folder the
 * command was started from, see `invocationDir`): a new folder, an empty one, or one holding a
 * previous report.
 * @throws UsageError `--out DIR: …` when `dir` is a file or a foreign non-empty folder.
 */
export function checkReportDir(dir: string): void {
  if (dir.trim() === '') throw new UsageError(`--out ${JSON.stringify(dir)}: give a folder name`);
  const out = userPath('--out', dir);
  const flag = describePath(out);
  const root = out.path;
  if (!existsSync(root)) {
    makeFolder(root, flag);
    return;
  }
  if (!statSync(root).isDirectory()) throw new UsageError(`${flag}: is a file, not a folder`);
  if (!existsSync(join(root, MANIFEST)) && readdirSync(root).length > 0) {
    throw new UsageError(`${flag}: the folder has files the lab did not write; choose a new or empty folder`);
  }
}

/**
 * Creates `root` one level at a time (never `mkdirSync(…, { recursive: true })`, which can spin on
 * pseudo file systems such as /proc), after checking that its nearest existing ancestor is a
 * writable folder, so that a bad `--out` fails before any experiment runs.
 * @throws UsageError naming the flag and the reason.
 */
function makeFolder(root: string, flag: string): void {
  const missing: string[] = [];
  let at = root;
  while (!existsSync(at)) {
    missing.unshift(at);
    const up = dirname(at);
    if (up === at) break;
    at = up;
  }
  if (!statSync(at).isDirectory()) throw new UsageError(`${flag}: ${at} is a file, not a folder`);
  try {
    accessSync(at, constants.W_OK);
    for (const folder of missing) mkdirSync(folder);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new UsageError(`${flag}: cannot create the folder (${code})`);
  }
}

/**
 * Writes the report into `dir` and returns the absolute path of its `index.html`. Nothing is
 * written outside `dir`. A second run replaces the first cleanly: the files the previous report
 * listed in its manifest are removed first (and its emptied sub-folders), so no stale figure stays.
 * A folder that holds files the lab did not write is refused rather than mixed into.
 * @throws UsageError `--out DIR: …` when `dir` is a file or a foreign non-empty folder.
 */
export function writeReport(dir: string, files: readonly ReportFile[]): string {
  const root = userPath('--out', dir).path;
  for (const f of files) {
    if (!isSafeRelative(f.path) || f.path === MANIFEST) throw new Error(`report: bad file path ${JSON.stringify(f.path)}`);
  }
  checkReportDir(dir);
  if (existsSync(root)) {
    const manifest = join(root, MANIFEST);
    if (existsSync(manifest)) {
      let previous: unknown;
      try {
        previous = JSON.parse(readFileSync(manifest, 'utf8'));
      } catch {
        previous = null;
      }
      const listed = Array.isArray(previous) ? previous.filter((p): p is string => typeof p === 'string' && isSafeRelative(p)) : [];
      const folders = new Set<string>();
      for (const p of listed) {
        rmSync(join(root, ...p.split('/')), { force: true });
        for (let d = dirname(p); d !== '.'; d = dirname(d)) folders.add(d);
      }
      // Deepest first; only folders the report made and that are now empty.
      for (const d of [...folders].sort((a, b) => b.length - a.length)) {
        const abs = join(root, ...d.split('/'));
        if (existsSync(abs) && readdirSync(abs).length === 0) rmdirSync(abs);
      }
      rmSync(manifest, { force: true });
    }
  }
  for (const f of files) {
    const abs = join(root, ...f.path.split('/'));
    if (!abs.startsWith(root + sep)) throw new Error(`report: ${f.path} would leave the output folder`);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, f.content);
  }
  writeFileSync(join(root, MANIFEST), `${JSON.stringify(files.map((f) => f.path), null, 1)}\n`);
  return join(root, 'index.html');
}
