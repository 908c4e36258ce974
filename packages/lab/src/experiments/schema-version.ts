/**
 * The version of the lab's JSON output, the first field of every document it writes
 * (`--format json`, and `data/EXPERIMENT.json` in a report). It changes only when a field is removed
 * or its meaning changes; new fields may appear in any version. The JSON Schema of each document is
 * in the lab package's `schemas/` folder.
 */
export const LAB_JSON_SCHEMA_VERSION = 1;
