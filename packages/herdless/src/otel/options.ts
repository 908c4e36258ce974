import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import { InvalidOptionError } from '../core/errors.js';
import { functionOption, objectOption } from '../core/validate.js';
import { DEFAULT_REDACTED_QUERY_PARAMETERS } from './redact.js';

/**
 * Options of {@link otelTelemetry}.
 * @example
 * ```ts
 * const options: OtelTelemetryOptions = { meterProvider, tracerProvider, redactQueryParameters: [...DEFAULT_REDACTED_QUERY_PARAMETERS, 'token'] };
 * ```
 */
export interface OtelTelemetryOptions {
  /** Where metrics go. Default: the global one (`metrics.getMeterProvider()`), a no-op when none is registered. */
  meterProvider?: MeterProvider | undefined;
  /** Where spans go. Default: the global one (`trace.getTracerProvider()`), a no-op when none is registered. */
  tracerProvider?: TracerProvider | undefined;
  /** `false`: record metrics only, no spans (and no trace context on the wire from herdless). Default `true`. */
  traces?: boolean | undefined;
  /**
   * Query parameters whose values `url.full` records as `REDACTED`. Default
   * {@link DEFAULT_REDACTED_QUERY_PARAMETERS} (the conventions' list); a list replaces it, so spread
   * the default to add to it. Names are compared exactly.
   */
  redactQueryParameters?: readonly string[] | undefined;
  /**
   * Your own redaction, applied to `url.full` after herdless's (credentials and the listed query
   * values already `REDACTED`): returns the string to record. A throw records the URL without its
   * query and fragment rather than leak it. Default: none.
   */
  redactUrl?: ((url: string) => string) | undefined;
  /**
   * `true`: while an attempt's request is sent, other instrumentations' spans are suppressed (the
   * OTel suppress-tracing context flag, which `@opentelemetry/instrumentation-undici` and `-http`
   * honour), so each physical request has exactly one CLIENT span — herdless's, the one whose
   * context goes on the wire. `false`: they run as usual, as children of herdless's attempt span.
   * Default `true`.
   */
  suppressInstrumentation?: boolean | undefined;
}

/** @internal The options, checked. */
export interface OtelConfig {
  readonly meterProvider: MeterProvider | undefined;
  readonly tracerProvider: TracerProvider | undefined;
  readonly traces: boolean;
  readonly redacted: ReadonlySet<string>;
  readonly redactUrl: ((url: string) => string) | undefined;
  readonly suppressInstrumentation: boolean;
}

const KEYS = ['meterProvider', 'tracerProvider', 'traces', 'redactQueryParameters', 'redactUrl', 'suppressInstrumentation'] as const;

function providerOption<P>(field: string, value: unknown, method: string): P | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || typeof (value as Record<string, unknown>)[method] !== 'function') {
    throw new InvalidOptionError('otelTelemetry', field, value, `must be an OpenTelemetry ${field === 'meterProvider' ? 'MeterProvider' : 'TracerProvider'} (with ${method}())`);
  }
  return value as P;
}

/** @internal Checks {@link OtelTelemetryOptions}; names the field and the value in the error. */
export function parseOtelOptions(options: OtelTelemetryOptions | undefined): OtelConfig {
  const o = objectOption('otelTelemetry', 'options', options, KEYS);
  for (const field of ['traces', 'suppressInstrumentation'] as const) {
    if (o[field] !== undefined && typeof o[field] !== 'boolean') throw new InvalidOptionError('otelTelemetry', field, o[field], 'must be a boolean');
  }
  const names = o.redactQueryParameters ?? DEFAULT_REDACTED_QUERY_PARAMETERS;
  if (!Array.isArray(names) || !names.every((n: unknown) => typeof n === 'string' && n !== '')) {
    throw new InvalidOptionError('otelTelemetry', 'redactQueryParameters', names, 'must be an array of non-empty strings');
  }
  return {
    meterProvider: providerOption<MeterProvider>('meterProvider', o.meterProvider, 'getMeter'),
    tracerProvider: providerOption<TracerProvider>('tracerProvider', o.tracerProvider, 'getTracer'),
    traces: o.traces ?? true,
    redacted: new Set(names),
    redactUrl: functionOption('otelTelemetry', 'redactUrl', o.redactUrl),
    suppressInstrumentation: o.suppressInstrumentation ?? true,
  };
}
