/**
 * The instrumentation scope's version: herdless's own (package.json's `version`, checked by a
 * test), so that a backend can tell which release recorded a series.
 */
export const OTEL_SCOPE_VERSION = '0.1.0';
