/**
 * `herdless/otel`: herdless's telemetry events as OpenTelemetry metrics and HTTP client spans, on
 * `@opentelemetry/api` (an optional peer dependency).
 * @packageDocumentation
 */
export { otelTelemetry, OTEL_SCOPE, type OtelTelemetry } from './adapter.js';
export type { OtelTelemetryOptions } from './options.js';
