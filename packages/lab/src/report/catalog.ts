import { BUDGET_FIGURES, budgetExperiment } from './budget.js';
import { FLEET_FIGURES, fleetExperiment } from './fleet.js';
import { HERD_FIGURES, herdExperiment, herdSpreadExperiment } from './herd.js';
import { layersExperiment } from './layers.js';
import { HEDGING_FIGURES, hedgingExperiment } from './hedging.js';
import type { Figure, LabExperiment } from './registry.js';

/** The experiments `npm run lab` runs, in report order. Later experiments append theirs here. */
export const LAB_EXPERIMENTS: readonly LabExperiment[] = [herdExperiment, herdSpreadExperiment, budgetExperiment, fleetExperiment, layersExperiment, hedgingExperiment];

/** The report's figures, in order within their sections. Later figures append theirs here. */
export const FIGURES: readonly Figure[] = [...HERD_FIGURES, ...BUDGET_FIGURES, ...FLEET_FIGURES, ...HEDGING_FIGURES];
