/*
 * Text from users (config files, flags, file names) quoted safely in human-readable output: control
 * characters and escape sequences never reach the terminal raw (they could retitle the window,
 * clear the screen or fake table rows), and a huge value is quoted by a short prefix only.
 */

/**
 * C0 and C1 controls (ESC, CSI 0x9b, BEL, CR, …) except tab and line feed, DEL, and the Unicode
 * format characters that reorder or break lines (bidi overrides and isolates, LRM/RLM, the line and
 * paragraph separators).
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_OR_BREAK = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** True when `text` holds a character {@link escapeControls} would escape with `oneLine` (a line break included). */
export const hasControls = (text: string): boolean => new RegExp(CONTROL_OR_BREAK.source).test(text);

const escapeChar = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * Escapes control characters as `\uXXXX` (the JSON form, so JSON output stays valid and means the
 * same): every one but line feed and tab, or every one when `oneLine`.
 */
export function escapeControls(text: string, oneLine = false): string {
  return text.replace(oneLine ? CONTROL_OR_BREAK : CONTROL, escapeChar);
}

/** The longest quotation of a value in a message, in characters. */
export const QUOTE_MAX = 60;

/**
 * A short, safe rendering of any value for a message: JSON-like, at most {@link QUOTE_MAX}
 * characters (a longer one ends in `...`), controls escaped; never walks more than a few levels or
 * items of an object, so a 10,000-level or 50 MB value costs no more than a small one.
 */
export function quote(value: unknown, max = QUOTE_MAX): string {
  const s = escapeControls(preview(value, 0), true);
  return s.length > max ? `${s.slice(0, max - 3)}...` : s;
}

/** Free text (a parser's message, a file name) on one line: controls escaped, at most `max` characters. */
export function shorten(text: string, max = 200): string {
  const s = escapeControls(text.length > max * 7 ? text.slice(0, max * 7) : text, true);
  return s.length > max ? `${s.slice(0, max - 3)}...` : s;
}

function preview(value: unknown, depth: number): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(value.length > QUOTE_MAX ? value.slice(0, QUOTE_MAX) : value).replace(/"$/, value.length > QUOTE_MAX ? '..."' : '"');
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'object' || value === null) return String(value);
  if (depth >= 3) return Array.isArray(value) ? '[...]' : '{...}';
  if (Array.isArray(value)) {
    const items = value.slice(0, 8).map((v) => preview(v, depth + 1));
    return `[${items.join(',')}${value.length > 8 ? ',...' : ''}]`;
  }
  const keys = Object.keys(value).slice(0, 8);
  const items = keys.map((k) => `${JSON.stringify(k.length > QUOTE_MAX ? `${k.slice(0, QUOTE_MAX)}...` : k)}:${preview((value as Record<string, unknown>)[k], depth + 1)}`);
  return `{${items.join(',')}${Object.keys(value).length > 8 ? ',...' : ''}}`;
}
