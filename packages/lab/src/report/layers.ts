import { runLayers, type LayersRow } from 'herdless/sim';
import { layersCsv, layersJson, layersTable, layersTitle } from '../experiments/layers.js';
import { defineExperiment } from './registry.js';

/** Frontend → backend → db, 3 attempts per caller, the db always failing. */
export const layersExperiment = defineExperiment<LayersRow[]>({
  id: 'layers',
  title: 'Retry at one layer',
  explanation:
    'A user calls the frontend, which calls the backend, which calls the db; every caller uses the library’s retry() with maxAttempts 3, ' +
    'and the db always fails. When every layer retries, attempts multiply: 3 calls reach the frontend, 9 the backend, 27 the db. When ' +
    'the services below the frontend answer “overloaded; don’t retry” (markDoNotRetry), only the user’s retries remain: 3 at every layer.',
  command: 'npm run lab -- layers',
  seeds: '0 (the counts do not depend on it)',
  run: () => runLayers(),
  table: (rows) => `${layersTitle(3, 3)}
${layersTable(rows)}`,
  json: layersJson,
  csv: layersCsv,
});
