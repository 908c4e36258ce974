/**
 * `herdless/otel`: herdless's telemetry events as OpenTelemetry metrics and client spans, on
 * `@opentelemetry/api` (an optional peer dependency); every attempt's request carries its span's
 * context through the registered propagator.
 * @packageDocumentation
 */
export { otelTelemetry, OTEL_SCOPE, type OtelTelemetry } from './adapter.js';
export { OTEL_SCOPE_VERSION } from './version.js';
export { DEFAULT_REDACTED_QUERY_PARAMETERS } from './redact.js';
export type { OtelTelemetryOptions } from './options.js';
