import { BUDGET_FIGURES, budgetExperiment } from './budget.js';
import { FLEET_FIGURES, fleetExperiment } from './fleet.js';
import { HERD_FIGURES, herdExperiment, herdSpreadExperiment } from './herd.js';
import { layersExperiment } from './layers.js';
import { HEDGING_FIGURES, hedgingExperiment } from './hedging.js';
import { CONTENTION_FIGURES, contentionExperiment } from './contention.js';
import { METASTABLE_FIGURES, metastableExperiment } from './metastable.js';
import type { Figure, LabExperiment } from './registry.js';

/** The experiments `npm run lab` runs, in report order. Later experiments append theirs here. */
export const LAB_EXPERIMENTS: readonly LabExperiment[] = [herdExperiment, herdSpreadExperiment, contentionExperiment, budgetExperiment, fleetExperiment, layersExperiment, metastableExperiment, hedgingExperiment];

/** The report's figures, in order within their sections. Later figures append theirs here. */
export const FIGURES: readonly Figure[] = [...HERD_FIGURES, ...CONTENTION_FIGURES, ...BUDGET_FIGURES, ...FLEET_FIGURES, ...METASTABLE_FIGURES, ...HEDGING_FIGURES];
