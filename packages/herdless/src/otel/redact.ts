/**
 * The query parameters whose values the OTel HTTP semantic conventions ask to record as
 * `REDACTED` in `url.full` (AWS and Google Cloud signed URLs, Azure shared access signatures):
 * `AWSAccessKeyId`, `Signature`, `sig`, `X-Goog-Signature`. Names are compared exactly, as the
 * conventions list them.
 * @example
 * ```ts
 * otelTelemetry({ redactQueryParameters: [...DEFAULT_REDACTED_QUERY_PARAMETERS, 'token'] });
 * ```
 */
export const DEFAULT_REDACTED_QUERY_PARAMETERS: readonly string[] = Object.freeze(['AWSAccessKeyId', 'Signature', 'sig', 'X-Goog-Signature']);

const REDACTED = 'REDACTED';

/**
 * @internal `url` as `url.full` may record it (OTel HTTP semantic conventions, "url.full"): user
 * name and password replaced by `REDACTED`, the values of the `redacted` query parameters replaced
 * by `REDACTED`. The rest is kept byte for byte (the query is edited in place, not re-encoded), so a
 * trace still matches the server's access log. A string that is not an absolute URL is returned
 * as it is, minus any `user:password@` before its host.
 */
export function redactUrl(url: string, redacted: ReadonlySet<string>): string {
  let out = url;
  // Credentials: scheme://user:password@host → scheme://REDACTED:REDACTED@host.
  const authority = /^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^/?#@]*)@/.exec(out);
  if (authority !== null) {
    const hasPassword = authority[2]!.includes(':');
    out = `${authority[1]}${hasPassword ? `${REDACTED}:${REDACTED}` : REDACTED}@${out.slice(authority[0].length)}`;
  }
  // The query ends at the fragment; a `?` inside the fragment starts none.
  const hash = out.indexOf('#');
  const end = hash < 0 ? out.length : hash;
  const q = out.indexOf('?');
  if (q < 0 || q > end || redacted.size === 0) return out;
  const pairs = out.slice(q + 1, end).split('&');
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i]!;
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    let name: string;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
    } catch {
      name = rawName;
    }
    if (eq >= 0 && redacted.has(name)) pairs[i] = `${rawName}=${REDACTED}`;
  }
  return `${out.slice(0, q + 1)}${pairs.join('&')}${out.slice(end)}`;
}
