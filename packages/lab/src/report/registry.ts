import type { TopLevelSpec } from 'vega-lite';
import type { ChartSize } from '../charts/specs.js';

/*
 * What the report is made of. `npm run lab` runs every experiment of LAB_EXPERIMENTS (printing its
 * table), then builds every figure of FIGURES from their results. Adding an experiment or a figure
 * is one object each:
 *
 *   - an experiment: `{ id, title, explanation, command, run, table, json, csv }` — its result is
 *     stored under its id, the report gets a section with the table and the data files;
 *   - a figure: `defineFigure({ id, section, title, explanation, command, data, spec })` — `data`
 *     builds plain rows from the results (or runs the engine itself), `spec` turns them into a
 *     Vega-Lite spec; the report writes figures/ID.svg, figures/ID.narrow.svg (for screens from 360 px),
 *     data/ID.json and data/ID.csv.
 */

/** Every experiment's result, by experiment id. */
export type LabResults = ReadonlyMap<string, unknown>;

/** How `npm run lab` runs an experiment. */
export interface RunSettings {
  /** Worker threads (0 = this thread); undefined = the runner's default. */
  workers?: number;
}

/** One experiment of `npm run lab`: a section of the report with its table and data. */
export interface LabExperiment<R = unknown> {
  /** The section's anchor and the data files' name: `data/ID.json`, `data/ID.csv`. */
  id: string;
  title: string;
  /** One paragraph: what was run and what the table shows. */
  explanation: string;
  /** The command that prints this table alone, e.g. `npm run lab -- herd --spread 0.9`. */
  command: string;
  /** The seeds, as text (`0-19`). */
  seeds: string;
  run(settings: RunSettings): Promise<R>;
  /** The block `npm run lab` prints (a header line and the table). */
  table(result: R): string;
  json(result: R): object;
  csv(result: R): string;
}

/** One figure of the report. */
export interface Figure<Row extends object = object> {
  /** File name stem: figures/ID.svg, data/ID.json, data/ID.csv. */
  id: string;
  /** The experiment section it belongs to. */
  section: string;
  title: string;
  /** One paragraph: what the figure shows; may quote its own data. */
  explanation: string | ((rows: readonly Row[]) => string);
  /** A command that prints the figure's data, runnable as pasted into a shell (no notes in it). */
  command: string;
  /** Builds the figure's rows from the experiments' results (or runs the engine itself). */
  data(results: LabResults): Row[] | Promise<Row[]>;
  /** The Vega-Lite spec; `size.width` set for the narrow copy (screens from 360 px), unset for the default. */
  spec(rows: readonly Row[], size: ChartSize): TopLevelSpec;
}

/** Declares a figure, keeping its row type for `data`, `spec` and `explanation`. */
export function defineFigure<Row extends object>(figure: Figure<Row>): Figure {
  return figure as unknown as Figure;
}

/** Declares an experiment, keeping its result type. */
export function defineExperiment<R>(experiment: LabExperiment<R>): LabExperiment {
  return experiment as unknown as LabExperiment;
}

/**
 * The result of experiment `id`.
 * @throws Error when that experiment was not run (a figure registered before its experiment).
 */
export function resultOf<R>(results: LabResults, id: string): R {
  if (!results.has(id)) throw new Error(`report: no result for experiment "${id}"`);
  return results.get(id) as R;
}
