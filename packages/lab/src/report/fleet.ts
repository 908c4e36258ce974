import { FLEET_POLICIES, fleetTrace, formatFixed } from 'herdless/sim';
import { perSecondSpec, type PerSecondPoint } from '../charts/specs.js';
import { FLEET_DEFAULTS, fleetCsv, fleetJson, fleetTable, fleetTitle, runFleetExperiment, type FleetResult } from '../experiments/fleet.js';
import { defineExperiment, defineFigure } from './registry.js';

const SEEDS = Array.from({ length: 20 }, (_, i) => i);
const OUTAGE = { startS: 5, endS: 15 };

/** The budget experiment's outage and traffic, sent by 200 processes of 2 s each. */
export const fleetExperiment = defineExperiment<FleetResult>({
  id: 'fleet',
  title: 'Budgets for a fleet of short-lived processes',
  explanation:
    'The budget experiment’s outage and traffic (about 300 new requests a second, the downstream down from 5 s to 15 s), sent by 200 ' +
    'processes alive at once, each replaced by a new one after 2 s — 4,000 processes in the run, each sending about 3 requests in its ' +
    'life, like serverless functions or autoscaled pods. A budget per process starts full in every new process and sees too few requests ' +
    'to mean anything: gRPC throttling lets every process retry about 4 times, so the load only halves, and the 10% ratio’s floor (1 retry ' +
    'a second per process) lets each one retry too. One budget shared by the fleet — what herdless/redis keeps in Redis — holds the ' +
    'load near 1× as a single client’s would. (Without a floor, a per-process ratio never retries at all, outage or not.)',
  command: 'npm run lab -- fleet',
  seeds: '0-19',
  run: () => Promise.resolve(runFleetExperiment({ policies: [...FLEET_POLICIES], seeds: SEEDS, ...FLEET_DEFAULTS })),
  table: (result) => `${fleetTitle(FLEET_DEFAULTS, '0-19')}\n${fleetTable(result)}`,
  json: fleetJson,
  csv: fleetCsv,
});

const arrivalsFigure = defineFigure<PerSecondPoint>({
  id: 'fleet-arrivals',
  section: 'fleet',
  title: 'Arrivals per second in a fleet of 200 two-second processes, seed 0 (new requests dashed, the outage shaded)',
  explanation: (points) => {
    const load = (policy: string): string => {
      const during = points.filter((p) => p.policy === policy && p.second >= OUTAGE.startS && p.second < OUTAGE.endS);
      return formatFixed(during.reduce((a, p) => a + p.arrivals, 0) / during.reduce((a, p) => a + p.fresh, 0), 2);
    };
    return (
      `Every panel gets the same new requests (the dashed line). During the outage the arrivals are ${load('4 attempts')}× the new requests ` +
      `without a budget, ${load('4 attempts + gRPC throttling per process')}× with gRPC throttling per process and ` +
      `${load('4 attempts + 10% retry ratio per process')}× with a 10% ratio per process, but ${load('4 attempts + shared gRPC throttling')}× ` +
      `with one shared bucket and ${load('4 attempts + shared 10% retry ratio')}× with one shared ratio.`
    );
  },
  command: 'npm run lab -- fleet --trace 0',
  data: () =>
    fleetTrace(0).flatMap((p) => p.arrivals.map((arrivals, second) => ({ policy: p.policy, second, arrivals, fresh: p.fresh[second]! }))),
  spec: (points) => perSecondSpec(points, FLEET_POLICIES, { outage: OUTAGE }),
});

/** The fleet section's figures. */
export const FLEET_FIGURES = [arrivalsFigure];
