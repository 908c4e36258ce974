import type { Command } from 'commander';
import { HEDGING_LOADS, HEDGING_POLICIES, HEDGING_SETTINGS, type HedgingPolicyName } from 'herdless/sim';
import { rowsToCsv } from '../charts/series.js';
import { DEFAULT_HEDGING_RUN, hedgingCsv, hedgingLabel, hedgingPoints, hedgingJson, hedgingTable, hedgingTitle, runHedgingExperiment, type HedgingRun } from '../experiments/hedging.js';
import { seedText } from '../experiments/herd.js';
import type { LiveCli } from '../live/commands.js';
import { quote } from '../text.js';
import { UsageError } from '../usage-error.js';
import { parseSeeds } from '../seeds.js';
import { FORMATS, choiceOption } from './names.js';

interface HedgingFlags {
  seeds?: string;
  loads?: string;
  policies?: string;
  maxAttempts?: string;
  delay?: string;
  percentile?: string;
  budgetRatio?: string;
  duration?: string;
  figureData?: boolean;
  format: 'table' | 'json' | 'csv';
}

/** The most runs (loads × policies × seeds) one command makes: about 0.15 s each. */
const MAX_RUNS = 2000;

/** `--loads 10,50,90`: percentages of capacity, each in [1, 100], ascending order kept as given (sorted). */
function parseLoads(text: string, cli: LiveCli): number[] {
  const loads = text.split(',').map((part) => cli.parseNumber('--loads', part.trim(), 1, 100) / 100);
  if (new Set(loads).size !== loads.length) throw new UsageError(`--loads ${quote(text)}: a load is listed twice`);
  return loads.sort((a, b) => a - b);
}

/**
 * `--policies`: the names of HEDGING_POLICIES, or the names the output gives them under this
 * percentile (`p99 delay` with `--percentile 99`, see hedgingLabel), so a name copied from a table
 * selects its row again.
 */
function parsePolicies(text: string, percentile: number, cli: LiveCli): HedgingPolicyName[] {
  const labels = HEDGING_POLICIES.map((policy) => hedgingLabel(policy, percentile));
  const allowed = [...new Set([...labels, ...HEDGING_POLICIES])];
  const policies = cli.parseNames('--policies', 'policy', text, allowed).map((name) => HEDGING_POLICIES[labels.includes(name) ? labels.indexOf(name) : HEDGING_POLICIES.indexOf(name as HedgingPolicyName)]!);
  if (new Set(policies).size !== policies.length) throw new UsageError(`--policies ${quote(text)}: a policy is listed twice`);
  return policies;
}

/** The run the flags describe (the report's run where a flag is not given). @throws UsageError naming the flag. */
export function hedgingRunOf(flags: HedgingFlags, cli: LiveCli): HedgingRun {
  const seeds = flags.seeds === undefined ? [...DEFAULT_HEDGING_RUN.seeds] : parseSeeds(flags.seeds);
  const loads = flags.loads === undefined ? [...HEDGING_LOADS] : parseLoads(flags.loads, cli);
  const settings = {
    maxAttempts: flags.maxAttempts === undefined ? HEDGING_SETTINGS.maxAttempts : cli.parseNumber('--max-attempts', flags.maxAttempts, 1, 10, true),
    delayMs: flags.delay === undefined ? HEDGING_SETTINGS.delayMs : cli.parseNumber('--delay', flags.delay, 0, 60_000),
    percentile: flags.percentile === undefined ? HEDGING_SETTINGS.percentile : cli.parseNumber('--percentile', flags.percentile, 1, 99.9),
    budgetRatio: flags.budgetRatio === undefined ? HEDGING_SETTINGS.budgetRatio : cli.parseNumber('--budget-ratio', flags.budgetRatio, 0, 1),
  };
  const policies = flags.policies === undefined ? [...HEDGING_POLICIES] : parsePolicies(flags.policies, settings.percentile, cli);
  const durationMs = flags.duration === undefined ? DEFAULT_HEDGING_RUN.durationMs : Math.round(cli.parseNumber('--duration', flags.duration, 3, 600) * 1000);
  const runs = seeds.length * loads.length * policies.length;
  if (runs > MAX_RUNS) throw new UsageError(`--seeds × --loads × --policies: ${runs} runs is more than ${MAX_RUNS}`);
  return { policies, loads, seeds, settings, durationMs };
}

/** Adds `hedging` to the lab's command line. */
export function addHedgingCommand(program: Command, cli: LiveCli): void {
  program
    .command('hedging')
    .description('hedging against a server with a latency tail, offered load 10%–100%: p50/p99/p99.9 and attempts per call, with and without a retry budget')
    .option('--seeds <list>', 'seeds, as ranges and lists: 0-2, 1,5,9 (default 0-2)')
    .option('--loads <list>', 'offered loads, % of capacity, comma-separated (default 10,20,…,100)')
    .option('--policies <names>', `comma-separated: ${HEDGING_POLICIES.join(', ')} (a --percentile other than 95 renames the p95 ones: p99 delay…)`)
    .option('--max-attempts <n>', `attempts per hedged call, the first included (1–10; default ${HEDGING_SETTINGS.maxAttempts})`)
    .option('--delay <ms>', `the fixed hedge delay, and the percentile policies' until they have 20 samples (default ${HEDGING_SETTINGS.delayMs})`)
    .option('--percentile <p>', `the percentile policies' percentile, and their name: p${HEDGING_SETTINGS.percentile} delay (1–99.9; default ${HEDGING_SETTINGS.percentile})`)
    .option('--budget-ratio <r>', `the budget: retryRatioBudget's ratio, hedges per request (0–1; default ${HEDGING_SETTINGS.budgetRatio})`)
    .option('--duration <seconds>', 'seconds of arrivals per run, the first 2 s not measured (3–600; default 20)')
    .option('--figure-data', "print the report figure's data instead of the table (CSV): one row per policy, load and metric")
    .addOption(choiceOption('--format <format>', 'output format', FORMATS, 'table'))
    .action((flags: HedgingFlags) => {
      const run = hedgingRunOf(flags, cli);
      const result = runHedgingExperiment(run);
      if (flags.figureData === true) cli.out(rowsToCsv(hedgingPoints(result)));
      else if (flags.format === 'json') cli.out(JSON.stringify(hedgingJson(result)));
      else if (flags.format === 'csv') cli.out(hedgingCsv(result));
      else cli.out(`${hedgingTitle(run, seedText(run.seeds))}\n${hedgingTable(result)}`);
    });
}
