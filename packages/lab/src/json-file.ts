import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { UsageError } from './usage-error.js';
import { shorten } from './text.js';

/*
 * Reading the lab's JSON inputs (scenario files, gRPC service configs) with bounded work: a size
 * cap before reading, the text's encoding named when it is not UTF-8, a nesting cap checked in one
 * linear pass before `JSON.parse` (so no later walk of the value can overflow the stack), a key
 * given twice in one object refused in that same pass, and every refusal one line.
 */

/** The largest input file, in bytes: a scenario with 100,000 listed seeds is under 1 MiB. */
export const MAX_INPUT_BYTES = 4 * 1024 * 1024;

/** The deepest nesting of arrays and objects accepted; the lab's formats need 5 levels. */
export const MAX_JSON_DEPTH = 64;

/**
 * Reads `file` and parses it as JSON.
 * @param where the prefix of every error, e.g. `--config "f.json"`.
 * @throws UsageError, one line: missing or unreadable, too large, not UTF-8 (UTF-16 and UTF-32
 *   named), nested too deep, or not valid JSON. A UTF-8 byte-order mark is accepted.
 */
export function readJsonFile(file: string, where: string): unknown {
  let bytes: Buffer;
  try {
    bytes = readAtMost(file, where);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`${where}: ${code === 'ENOENT' ? 'no such file' : `cannot read it (${code ?? String(error)})`}`);
  }
  return parseJsonText(decodeUtf8(bytes, where), where);
}

/**
 * The bytes of `file`, read in steps and never more than {@link MAX_INPUT_BYTES} + 1 of them: a
 * device or a pipe (`/dev/zero`, `<(yes)`) reports size 0 and never ends, and a file can grow after
 * it was measured, so the cap is kept while reading, not only by the size the file reports.
 * @throws UsageError when there is more; the file system's own error otherwise.
 */
function readAtMost(file: string, where: string): Buffer {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_INPUT_BYTES) throw new UsageError(`${where}: the file is ${size} bytes; the lab reads at most ${MAX_INPUT_BYTES} (4 MiB)`);
    const buffer = Buffer.allocUnsafe(MAX_INPUT_BYTES + 1);
    let length = 0;
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      if (length > MAX_INPUT_BYTES) throw new UsageError(`${where}: the file is over ${MAX_INPUT_BYTES} bytes; the lab reads at most 4 MiB`);
    }
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

/**
 * The text of a UTF-8 file, without its byte-order mark if it has one.
 * @throws UsageError naming the encoding (UTF-16 LE/BE, UTF-32 LE/BE) or the first byte that is not UTF-8.
 */
export function decodeUtf8(bytes: Uint8Array, where: string): string {
  const other = otherEncoding(bytes);
  if (other !== undefined) throw new UsageError(`${where}: the file is ${other}; save it as UTF-8`);
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes.subarray(start));
  } catch {
    const at = firstInvalidUtf8(bytes, start);
    throw new UsageError(`${where}: the file is not UTF-8 text (byte 0x${(bytes[at] ?? 0).toString(16).padStart(2, '0')} at offset ${at}); save it as UTF-8`);
  }
}

/** The encoding a file's byte-order mark or NUL pattern shows, when it is not UTF-8. */
function otherEncoding(b: Uint8Array): string | undefined {
  if (b[0] === 0xff && b[1] === 0xfe && b[2] === 0 && b[3] === 0) return 'UTF-32 LE (it starts with a UTF-32 byte-order mark)';
  if (b[0] === 0 && b[1] === 0 && b[2] === 0xfe && b[3] === 0xff) return 'UTF-32 BE (it starts with a UTF-32 byte-order mark)';
  if (b[0] === 0xff && b[1] === 0xfe) return 'UTF-16 LE (it starts with a UTF-16 byte-order mark)';
  if (b[0] === 0xfe && b[1] === 0xff) return 'UTF-16 BE (it starts with a UTF-16 byte-order mark)';
  // Without a mark: JSON text starts with ASCII, so UTF-16 shows a NUL beside its first character.
  if (b.length >= 2 && b[0] !== 0 && b[1] === 0) return 'UTF-16 LE (NUL bytes between its characters)';
  if (b.length >= 2 && b[0] === 0 && b[1] !== 0) return 'UTF-16 BE (NUL bytes between its characters)';
  return undefined;
}

function firstInvalidUtf8(b: Uint8Array, start: number): number {
  for (let i = start; i < b.length; ) {
    const c = b[i]!;
    const n = c < 0x80 ? 0 : c >= 0xc2 && c < 0xe0 ? 1 : c >= 0xe0 && c < 0xf0 ? 2 : c >= 0xf0 && c < 0xf5 ? 3 : -1;
    if (n < 0) return i;
    for (let k = 1; k <= n; k++) if (((b[i + k] ?? 0) & 0xc0) !== 0x80) return i;
    i += n + 1;
  }
  return start;
}

/** An open object (its keys so far, the key being read) or array (the index of the entry being read). */
type Frame = { keys: Set<string>; key: string | undefined; expectKey: boolean } | { index: number };

/**
 * Parses JSON text after checking, in one pass, that arrays and objects nest at most
 * {@link MAX_JSON_DEPTH} deep and that no object names a key twice: `JSON.parse` keeps the last
 * value of a repeated key, so `{"clients": 1000, "clients": 5}` would run with 5 without a word.
 * @throws UsageError naming the depth and the offset, the parser's complaint (quoted short), or
 *   the repeated key and where it is (`server.tickMs appears twice`).
 */
export function parseJsonText(text: string, where: string): unknown {
  const stack: Frame[] = [];
  let stringStart = -1;
  let repeated: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (stringStart >= 0) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) {
        const top = stack.at(-1);
        if (repeated === undefined && top !== undefined && 'keys' in top && top.expectKey) {
          const key = keyText(text.slice(stringStart, i + 1));
          if (top.keys.has(key)) repeated = jsonPath([...stack.slice(0, -1), { ...top, key }]);
          top.keys.add(key);
          top.key = key;
          top.expectKey = false;
        }
        stringStart = -1;
      }
    } else if (c === 0x22) {
      stringStart = i;
    } else if (c === 0x5b || c === 0x7b) {
      stack.push(c === 0x7b ? { keys: new Set(), key: undefined, expectKey: true } : { index: 0 });
      if (stack.length > MAX_JSON_DEPTH) throw new UsageError(`${where}: arrays and objects nest more than ${MAX_JSON_DEPTH} levels deep (at character ${i}); the lab's files need 5`);
    } else if (c === 0x5d || c === 0x7d) {
      stack.pop();
    } else if (c === 0x2c) {
      const top = stack.at(-1);
      if (top !== undefined && 'keys' in top) top.expectKey = true;
      else if (top !== undefined) top.index++;
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`${where}: not valid JSON (${shorten((error as Error).message, 160)})`);
  }
  // Reported only for valid JSON: in a broken file the parser's complaint is the first thing to fix.
  if (repeated !== undefined) throw new UsageError(`${where}: ${repeated} appears twice; give each field once`);
  return value;
}

/** A key's text from its quoted form, escapes read (`"a\u0062"` is `ab`); left quoted if it is no valid string. */
function keyText(quoted: string): string {
  if (!quoted.includes('\\')) return quoted.slice(1, -1);
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return quoted;
  }
}

/** The path of the key or entry being read in each open object or array: `servers.slow.workers`, `policies[1].name`. */
function jsonPath(stack: readonly Frame[]): string {
  return stack.map((f, i) => ('keys' in f ? `${i === 0 ? '' : '.'}${f.key === '' ? '""' : shorten(f.key ?? '', 80)}` : `[${f.index}]`)).join('');
}
