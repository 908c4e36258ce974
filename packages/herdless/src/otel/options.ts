import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import { InvalidOptionError } from '../core/errors.js';
import { objectOption } from '../core/validate.js';

/**
 * Options of {@link otelTelemetry}.
 * @example
 * ```ts
 * const options: OtelTelemetryOptions = { meterProvider, tracerProvider, traces: true };
 * ```
 */
export interface OtelTelemetryOptions {
  /** Where metrics go. Default: the global one (`metrics.getMeterProvider()`), a no-op when none is registered. */
  meterProvider?: MeterProvider | undefined;
  /** Where spans go. Default: the global one (`trace.getTracerProvider()`), a no-op when none is registered. */
  tracerProvider?: TracerProvider | undefined;
  /** `false`: record metrics only, no spans. Default `true`. */
  traces?: boolean | undefined;
}

/** @internal The options, checked. */
export interface OtelConfig {
  readonly meterProvider: MeterProvider | undefined;
  readonly tracerProvider: TracerProvider | undefined;
  readonly traces: boolean;
}

const KEYS = ['meterProvider', 'tracerProvider', 'traces'] as const;

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
  if (o.traces !== undefined && typeof o.traces !== 'boolean') throw new InvalidOptionError('otelTelemetry', 'traces', o.traces, 'must be a boolean');
  return {
    meterProvider: providerOption<MeterProvider>('meterProvider', o.meterProvider, 'getMeter'),
    tracerProvider: providerOption<TracerProvider>('tracerProvider', o.tracerProvider, 'getTracer'),
    traces: o.traces ?? true,
  };
}
