import { accessSync, closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from '../usage-error.js';
import type { ReportFile } from './build.js';

/** The list of files the last report wrote, kept in the output folder so the next run can remove them. */
export const MANIFEST = '.herdless-report.json';

function isSafeRelative(path: string): boolean {
  return path !== '' && !path.startsWith('/') && !path.split('/').some((part) => part === '' || part === '.' || part === '..') && !path.includes('\\') && !path.includes('\0');
}

/** `lstat` that reports a missing path as `undefined`: it never follows a symbolic link. */
function lstat(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ENOTDIR: a file stands where a folder on the way should be; makeFolder names it.
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** What sits at `path`, in the words of a one-line refusal. */
function kind(s: Stats): string {
  if (s.isSymbolicLink()) return 'a symbolic link';
  if (s.isDirectory()) return 'a folder';
  if (s.isFile()) return 'a file';
  return 'a special file';
}

/**
 * The previous report's file list, or `undefined` when the folder holds none. The manifest must be
 * a regular file (not a link) holding a JSON array of strings, or the folder is not the lab's.
 */
function readManifest(root: string, flag: string): string[] | undefined {
  const path = join(root, MANIFEST);
  const s = lstat(path);
  if (s === undefined) return undefined;
  const refuse = (why: string) =>
    new UsageError(`${flag}: its ${MANIFEST} ${why}, so the folder is not a report the lab wrote; choose a new or empty folder`);
  if (!s.isFile()) throw refuse(`is ${kind(s)}`);
  // The lab's own manifest lists a few dozen paths: a larger one was not written by it.
  if (s.size > 1024 * 1024) throw refuse(`is ${s.size} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw refuse('is not JSON');
  }
  if (!Array.isArray(parsed) || !parsed.every((p) => typeof p === 'string')) throw refuse('is not a list of file names');
  return parsed;
}

/**
 * Checks, before anything runs, that the report may be written to `dir`: a new folder, an empty
 * one, or one holding a previous report (a valid manifest). `dir` itself must be a real folder,
 * not a symbolic link: the lab follows no link it did not make.
 * @throws UsageError `--out DIR: …` (one line) when `dir` is a file, a link, or a non-empty folder
 *   that is not a report of the lab's.
 */
export function checkReportDir(dir: string): void {
  const flag = `--out ${JSON.stringify(dir)}`;
  if (dir.trim() === '') throw new UsageError(`${flag}: give a folder name`);
  const root = resolve(dir);
  const s = lstat(root);
  if (s === undefined) {
    makeFolder(root, flag);
    return;
  }
  if (s.isSymbolicLink()) throw new UsageError(`${flag}: is a symbolic link; give the folder itself (the lab follows no link it did not make)`);
  if (!s.isDirectory()) throw new UsageError(`${flag}: is a file, not a folder`);
  if (readManifest(root, flag) === undefined) {
    if (readdirSync(root).length > 0) throw new UsageError(`${flag}: the folder has files the lab did not write; choose a new or empty folder`);
    return;
  }
  refuseLinks(root, flag);
}

/** A report holds a few dozen entries; a folder with more than this is not one of the lab's. */
const MAX_ENTRIES = 10_000;

/**
 * Refuses a report folder holding a symbolic link anywhere below it (the lab makes none, so one
 * there was planted or added), walking real folders only; bounded by {@link MAX_ENTRIES}.
 * @throws UsageError naming the link's relative path.
 */
function refuseLinks(root: string, flag: string): void {
  const queue = [''];
  let seen = 0;
  for (let i = 0; i < queue.length; i++) {
    const rel = queue[i]!;
    for (const e of readdirSync(rel === '' ? root : join(root, ...rel.split('/')), { withFileTypes: true })) {
      if (++seen > MAX_ENTRIES) throw new UsageError(`${flag}: the folder holds more than ${MAX_ENTRIES} entries, so it is not a report the lab wrote; choose a new or empty folder`);
      const path = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isSymbolicLink()) throw new UsageError(`${flag}: ${path} is a symbolic link the lab did not make; it follows none — remove it or choose a new folder`);
      if (e.isDirectory()) queue.push(path);
    }
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
  // The ancestors are the user's own path: following a link there (macOS's /tmp is one) is theirs to choose.
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
 * Where a report file may go: every folder on its way below `root` is missing or a real folder
 * (never a link), and the file itself is missing or a regular file. Returns the reason when not.
 */
function obstacle(root: string, path: string): string | undefined {
  const parts = path.split('/');
  let at = root;
  for (const [i, part] of parts.entries()) {
    at = join(at, part);
    const s = lstat(at);
    if (s === undefined) return undefined;
    const last = i === parts.length - 1;
    if (last ? !s.isFile() : !s.isDirectory()) return `${parts.slice(0, i + 1).join('/')} is ${kind(s)}`;
  }
  return undefined;
}

/** Opens for writing without following a link at the last step (O_NOFOLLOW), creating or truncating. */
function writeNoFollow(abs: string, content: string): void {
  const fd = openSync(abs, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
}

/** Makes each missing folder of `path`'s parent below `root`, one level at a time, never through a link. */
function makeParents(root: string, path: string): void {
  let at = root;
  for (const part of path.split('/').slice(0, -1)) {
    at = join(at, part);
    const s = lstat(at);
    if (s === undefined) mkdirSync(at);
    else if (!s.isDirectory()) throw new Error(`report: ${path}: ${part} changed under the lab (now ${kind(s)})`);
  }
}

/**
 * Writes the report into `dir` and returns the absolute path of its `index.html`. Nothing is
 * written or deleted outside `dir`, and no symbolic link is followed: every folder and file the
 * lab touches below `dir` is checked with `lstat` first, and files are opened with `O_NOFOLLOW`.
 * A second run replaces the first cleanly: the files the previous report listed in its manifest
 * are removed first (and its emptied sub-folders), so no stale figure stays. Everything is checked
 * before anything is removed, so a refusal loses nothing.
 * @throws UsageError `--out DIR: …` (one line) when `dir` is a file, a link, a foreign non-empty
 *   folder, or holds a link, a folder or a file the lab did not write where a report file goes.
 */
export function writeReport(dir: string, files: readonly ReportFile[]): string {
  const flag = `--out ${JSON.stringify(dir)}`;
  const root = resolve(dir);
  // The report's own paths: relative, inside `dir`, not the manifest (nor under it), and no path
  // both a file and a folder of another (`a` and `a/b`).
  const folders = new Set(files.flatMap((f) => f.path.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
  for (const f of files) {
    if (!isSafeRelative(f.path) || f.path.split('/')[0] === MANIFEST || folders.has(f.path)) throw new Error(`report: bad file path ${JSON.stringify(f.path)}`);
  }
  checkReportDir(dir);
  const listed = [...new Set(readManifest(root, flag) ?? [])].filter((p) => isSafeRelative(p) && p !== MANIFEST);
  // Only regular files reached through real folders are removed: a listed path through a link,
  // or naming a link or a folder, is left alone (the manifest may have been planted).
  const removable = listed.filter((p) => obstacle(root, p) === undefined && lstat(join(root, ...p.split('/'))) !== undefined);
  const ours = new Set(removable);
  for (const f of files) {
    const why = obstacle(root, f.path);
    if (why !== undefined) throw new UsageError(`${flag}: ${why} where the report writes ${f.path}; the lab follows no link and replaces only its own files — move it away or choose a new folder`);
    if (!ours.has(f.path) && lstat(join(root, ...f.path.split('/'))) !== undefined) {
      throw new UsageError(`${flag}: ${f.path} is there and the lab did not write it; move it away or choose a new folder`);
    }
  }
  const emptied = new Set<string>();
  for (const p of removable) {
    unlinkSync(join(root, ...p.split('/')));
    for (let d = dirname(p); d !== '.'; d = dirname(d)) emptied.add(d);
  }
  // Deepest first; only real folders the report made and that are now empty.
  for (const d of [...emptied].sort((a, b) => b.length - a.length)) {
    const abs = join(root, ...d.split('/'));
    if (lstat(abs)?.isDirectory() === true && readdirSync(abs).length === 0) rmdirSync(abs);
  }
  if (lstat(join(root, MANIFEST)) !== undefined) unlinkSync(join(root, MANIFEST));
  for (const f of files) {
    makeParents(root, f.path);
    writeNoFollow(join(root, ...f.path.split('/')), f.content);
  }
  writeNoFollow(join(root, MANIFEST), `${JSON.stringify(files.map((f) => f.path), null, 1)}\n`);
  return join(root, 'index.html');
}
