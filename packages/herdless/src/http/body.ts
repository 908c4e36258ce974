/**
 * Whether a request body can be sent again. A body fetch extracts afresh on every call (a string,
 * bytes, a Blob, form data) is replayable; a stream is read once by the first attempt, so sending
 * it again would send nothing — which must never happen.
 */

/**
 * @internal A response body that is discarded (a retried status, a late answer) is drained — its
 * keep-alive connection can then carry the next attempt — while it stays under this many bytes,
 * and destroyed past it: reading more would cost more than a new connection does.
 */
export const DRAIN_LIMIT = 256 * 1024;

/** @internal */
export type BodyKind = 'none' | 'replayable' | 'stream';

const REPLAYABLE_TAGS: ReadonlySet<string> = /* @__PURE__ */ new Set([
  '[object Blob]',
  '[object File]',
  '[object FormData]',
  '[object URLSearchParams]',
  '[object ArrayBuffer]',
  '[object SharedArrayBuffer]',
]);

/**
 * @internal Classifies a `RequestInit.body`: `null`/`undefined` → `'none'`; a string, an
 * `ArrayBuffer`, a typed array or `DataView`, a `Blob`, `URLSearchParams` or `FormData` →
 * `'replayable'`; a `ReadableStream` or an async iterable (Node.js's fetch accepts those) →
 * `'stream'`. Any other object is converted to a string by fetch on every call (WebIDL), so it
 * is replayable.
 */
export function bodyKind(body: unknown): BodyKind {
  if (body === null || body === undefined) return 'none';
  // Stryker disable next-line ConditionalExpression: a primitive has no getReader or async iterator either, and ends as 'replayable' below
  if (typeof body !== 'object') return 'replayable';
  // Stryker disable next-line ConditionalExpression,LogicalOperator: these bodies have no getReader or async iterator, and end as 'replayable' below (the check only says so early)
  if (ArrayBuffer.isView(body) || REPLAYABLE_TAGS.has(Object.prototype.toString.call(body))) return 'replayable';
  if (typeof (body as { getReader?: unknown }).getReader === 'function') return 'stream';
  if (typeof (body as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function') return 'stream';
  return 'replayable';
}
