/**
 * A fresh idempotency key for one logical request: a random (version 4) UUID as a Structured
 * Fields string — in double quotes, as the IETF httpapi draft "The Idempotency-Key HTTP Header
 * Field" specifies the header (`Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"`).
 * Uses `crypto.randomUUID()`, or `crypto.getRandomValues()` where that is missing (browsers outside
 * secure contexts).
 *
 * @throws Error when the platform has no Web Crypto at all.
 * @example
 * ```ts
 * headers.set('Idempotency-Key', newIdempotencyKey());
 * ```
 */
export function newIdempotencyKey(): string {
  const crypto = (globalThis as { crypto?: Crypto }).crypto;
  if (crypto !== undefined && typeof crypto.randomUUID === 'function') return `"${crypto.randomUUID()}"`;
  if (crypto === undefined || typeof crypto.getRandomValues !== 'function') {
    throw new Error('herdless: no Web Crypto (crypto.getRandomValues) to generate an idempotency key; pass idempotencyKey: () => yourKey');
  }
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40; // version 4
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC 9562 variant
  let hex = '';
  for (const b of bytes) hex += b.toString(16).padStart(2, '0');
  return `"${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}"`;
}
