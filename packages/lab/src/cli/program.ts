import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { HERD_STRATEGIES, type HerdStrategy } from 'herdless/sim';
import { loadConfig } from '../config-file.js';
import { MAX_EVENTS, checkWork } from '../estimate.js';
import { closestName } from '../closest.js';
import { quote } from '../text.js';
import { LAB_JSON_SCHEMA_VERSION } from '../experiments/schema-version.js';
import { UsageError } from '../usage-error.js';
import { describeRun, seedText, herdBase, herdCsv, herdJson, herdPerSeed, herdPolicies, herdTable, type HerdRun } from '../experiments/herd.js';
import { runHerdExperiment } from '../experiments/herd-run.js';
import { buildReport } from '../report/build.js';
import { FIGURES, LAB_EXPERIMENTS } from '../report/catalog.js';
import { checkReportDir, writeReport } from '../report/write.js';
import { parseSeeds } from '../seeds.js';
import { FORMATS, canonicalName, choiceOption, parseNames, parseOneSeed, suggestion, textOption, traceSeedOf } from './names.js';
import { COUNT, DECIMAL, INTEGER } from '../numbers.js';
import { arrivalBins, rowsToCsv, waitPoints } from '../charts/series.js';
import { budgetCsv, budgetJson, budgetPolicies, budgetTable, budgetTitle, budgetTraceCsv, budgetTraceJson, configPolicies } from '../experiments/budget.js';
import { grpcPolicy, runBudgetExperiment } from '../experiments/budget-run.js';
import { BUDGET_POLICIES, budgetScenario, budgetTrace, herdBackoff, runLayers, runScenario, scenarioFromSpec, type BudgetPolicyName } from 'herdless/sim';
import { layersCsv, layersJson, layersTable, layersTitle } from '../experiments/layers.js';
import { addLiveCommands } from '../live/commands.js';
import { addHedgingCommand } from './hedging.js';
import { addModelCommands } from './models.js';
import { FLEET_DEFAULTS, fleetCsv, fleetJson, fleetTable, fleetTitle, fleetTraceCsv, fleetTraceJson, runFleetExperiment } from '../experiments/fleet.js';
import { FLEET_POLICIES, fleetTrace, type FleetPolicyName } from 'herdless/sim';
import { LIVE_LAYERS_MAX_CALLS, runLiveLayers } from '../experiments/layers-live.js';

/** The title's ending for a live run: what the counts are. */
const LIVE_SUFFIX = '\n# live: node:http servers on 127.0.0.1, each calling the next with withRetry(fetch); requests counted by the servers';

type Format = (typeof FORMATS)[number];

/** Where the CLI writes; tests pass their own. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

interface HerdFlags {
  spread?: string;
  seeds?: string;
  strategies?: string;
  perSeed?: boolean;
  config?: string;
  format: Format;
  /** True when `--format` was on the command line (not its default). */
  formatGiven?: boolean;
  workers?: string;
  bins?: string;
  maxEvents?: string;
}


/** A numeric flag: a plain decimal number (an integer when `integer`) from min to max. @throws UsageError naming the flag and the value. */
function parseNumberFlag(flag: string, text: string, min: number, max: number, integer = false): number {
  const value = Number(text);
  const inRange = value >= min && value <= max && (!integer || Number.isInteger(value));
  if (!(integer ? INTEGER : DECIMAL).test(text.trim()) || !inRange) {
    // `0x10`, `3e0`, `1.0` for a count: a value in range, written in a form the flag does not take.
    const form = inRange && text.trim() !== '' ? ', in plain decimal' : '';
    throw new UsageError(`${flag} ${quote(text)}: expected ${integer ? 'an integer' : 'a number'} from ${min} to ${max}${form}`);
  }
  return value;
}

const parseStrategies = (text: string): HerdStrategy[] => parseNames('--strategies', 'strategy', text, HERD_STRATEGIES);
const parsePolicies = (text: string): BudgetPolicyName[] => parseNames('--policies', 'policy', text, BUDGET_POLICIES);

/** The seeds of a run from a scenario file: `--seeds` if given, else the file's, else 0–19. */
function configSeeds(flag: string | undefined, config: { seeds?: string | number[] }, file: string): number[] {
  if (flag !== undefined) return parseSeeds(flag);
  if (typeof config.seeds === 'string') return parseSeeds(config.seeds, `--config ${JSON.stringify(file)}: seeds`);
  return config.seeds ?? parseSeeds('0-19');
}

/** Quotes a word for a POSIX shell when it needs it. */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * `--max-events N`: the bound on a command's estimated request events (default {@link MAX_EVENTS}).
 * Takes `1e10`-style as well as plain decimal: the help and the refusals print the bound and the
 * estimate that way, so a user can paste them.
 */
function maxEvents(text: string | undefined): number {
  if (text === undefined) return MAX_EVENTS;
  const value = Number(text.trim());
  if (!COUNT.test(text.trim()) || !Number.isInteger(value) || value < 1 || value > 1e15) {
    throw new UsageError(`--max-events ${quote(text)}: expected a whole number of events from 1 to 1e15, such as 20000000000 or 2e10`);
  }
  return value;
}

const RAISE = 'raise the bound with --max-events N';

/** Turns the herd command's flags into a run: the article's preset, or a config file; refuses a run above the work bound. */
export function herdRunFromFlags(flags: HerdFlags): HerdRun {
  const run = herdRunOf(flags);
  checkWork(run.base, run.policies, run.seeds.length, maxEvents(flags.maxEvents), flags.config === undefined ? 'herd' : `--config ${JSON.stringify(flags.config)}`, RAISE);
  return run;
}

function herdRunOf(flags: HerdFlags): HerdRun {
  const common = workersOf(flags.workers);
  if (flags.config !== undefined) {
    if (flags.spread !== undefined) throw new UsageError('--spread cannot be combined with --config: set arrivals.spreadMs in the file');
    const config = loadConfig(flags.config);
    let policies = config.policies;
    if (flags.strategies !== undefined) {
      const names = policies.map((p) => p.name);
      const wanted = flags.strategies.split(',').map((s) => {
        const w = s.trim();
        const name = canonicalName(w, names);
        if (name === undefined) throw new UsageError(`--strategies ${quote(flags.strategies)}: the config has no policy named ${quote(w)}${suggestion(w, names, 'it has')}`);
        return name;
      });
      policies = policies.filter((p) => wanted.includes(p.name));
    }
    const seeds = configSeeds(flags.seeds, config, flags.config);
    return { experiment: 'scenario', name: config.name, base: config.base, policies, seeds, ...common };
  }
  const spreadS = flags.spread === undefined ? 0 : parseNumberFlag('--spread', flags.spread, 0, 120);
  return {
    experiment: 'herd',
    base: herdBase(spreadS * 1000),
    policies: herdPolicies(flags.strategies === undefined ? HERD_STRATEGIES : parseStrategies(flags.strategies)),
    seeds: parseSeeds(flags.seeds ?? '0-19'),
    ...common,
  };
}

async function herdCommand(flags: HerdFlags, io: Io): Promise<void> {
  const run = herdRunFromFlags(flags);
  if (flags.bins !== undefined) {
    binsCommand(run, flags, io);
    return;
  }
  const result = await runHerdExperiment(run);
  const perSeed = flags.perSeed === true;
  if (flags.format === 'json') {
    io.out(JSON.stringify(herdJson(result, perSeed)));
  } else if (flags.format === 'csv') {
    io.out(herdCsv(result, perSeed));
  } else {
    io.out(`${describeRun(run)}\n${herdTable(result)}`);
    if (perSeed) io.out(herdPerSeed(result));
  }
}

/**
 * `herd --bins MS --seeds N`: the arrivals per bin of one seed's run of each policy, the data of the
 * report's arrival figures (CSV as the report's data file, or JSON).
 */
function binsCommand(run: HerdRun, flags: HerdFlags, io: Io): void {
  const bins = quote(flags.bins);
  const tickMs = run.base.server.tickMs;
  const binMs = parseNumberFlag('--bins', flags.bins!, 1, 60_000, true);
  if (binMs % tickMs !== 0) throw new UsageError(`--bins ${bins}: must be a whole number of ${tickMs} ms ticks`);
  if (run.seeds.length !== 1) throw new UsageError(`--bins ${bins} bins one run per policy: give one seed with --seeds (got ${seedText(run.seeds)})`);
  if (flags.perSeed === true) throw new UsageError(`--bins ${bins} prints bins, not runs: it cannot be combined with --per-seed`);
  if (flags.formatGiven === true && flags.format === 'table') throw new UsageError(`--bins ${bins} prints CSV or JSON: --format table has no bins form (use --format csv or json)`);
  const seed = run.seeds[0]!;
  const rows = run.policies.flatMap((policy) => {
    const spec = { ...run.base, policy };
    return arrivalBins(policy.name, runScenario(scenarioFromSpec(spec), seed, { perTick: true }), tickMs, binMs);
  });
  io.out(flags.format === 'json' ? JSON.stringify({ schemaVersion: LAB_JSON_SCHEMA_VERSION, experiment: 'herd-bins', seed, binMs, bins: rows }) : rowsToCsv(rows));
}

interface WaitsFlags {
  strategies?: string;
  clients?: string;
  failures?: string;
  seeds?: string;
  format: 'csv' | 'json';
}

/**
 * `waits --format`: csv or json only. A parser rather than commander's `.choices()`, whose help
 * would list `table` too; `table` gets its own message, anything else commander's one line.
 */
function waitsFormat(value: string): 'csv' | 'json' {
  const format = canonicalName(value.trim(), ['csv', 'json', 'table'] as const);
  if (format === 'csv' || format === 'json') return format;
  if (format === 'table') throw new UsageError('waits prints CSV or JSON: --format table has no waits form (use --format csv or json)');
  const near = closestName(value.trim(), ['csv', 'json']);
  throw new InvalidArgumentError(`${near === undefined ? '' : `Did you mean ${near}? `}Allowed choices are csv, json.`);
}

/** `waits`: each client's successive waits drawn by the herd strategies' backoff objects, the data of the report's waits figure. */
function waitsCommand(flags: WaitsFlags, io: Io): void {
  const strategies = flags.strategies === undefined ? WAIT_STRATEGIES : parseStrategies(flags.strategies);
  const clients = flags.clients === undefined ? 40 : parseNumberFlag('--clients', flags.clients, 1, 10_000, true);
  const failures = flags.failures === undefined ? 10 : parseNumberFlag('--failures', flags.failures, 1, 100, true);
  const seed = flags.seeds === undefined ? 0 : parseOneSeed(flags.seeds, 'waits draws every strategy\'s waits from one seed');
  const points = waitPoints(
    strategies.map((s) => ({ label: s, backoff: herdBackoff(s) })),
    herdBackoff('exponential'),
    { clients, failures, seed },
  );
  io.out(flags.format === 'json' ? JSON.stringify({ schemaVersion: LAB_JSON_SCHEMA_VERSION, experiment: 'waits', seed, points }) : rowsToCsv(points));
}

/** The jitters the waits figure compares, and `waits` draws by default. */
export const WAIT_STRATEGIES: readonly HerdStrategy[] = ['full jitter', 'equal jitter', 'decorrelated'];

interface BudgetFlags {
  seeds?: string;
  config?: string;
  policies?: string;
  grpcServiceConfig?: string;
  trace?: string;
  /** With --trace: only `tokens` or only `per-second`. */
  series?: string;
  format: Format;
  /** True when `--format` was on the command line (not its default). */
  formatGiven?: boolean;
  workers?: string;
  maxEvents?: string;
}

/** `--workers N` as run settings: `{ workers: N }`, or `{}` for the runner's default. @throws UsageError for a bad count. */
function workersOf(text: string | undefined): { workers?: number } {
  return text === undefined ? {} : { workers: parseNumberFlag('--workers', text, 0, 64, true) };
}

const WORKERS_HELP = 'worker threads (0 = run in this thread; default: one per core, at most 8)';

async function budgetCommand(flags: BudgetFlags, io: Io): Promise<void> {
  const workers = workersOf(flags.workers);
  if (flags.config !== undefined) {
    if (flags.policies !== undefined || flags.trace !== undefined || flags.grpcServiceConfig !== undefined) {
      throw new UsageError('--config runs the file\'s own policies: it cannot be combined with --policies, --trace or --grpc-service-config');
    }
    const config = loadConfig(flags.config);
    if (config.base.server.outages.length === 0) {
      throw new UsageError(`--config ${JSON.stringify(flags.config)}: server.outages is empty; the budget table measures an outage`);
    }
    const seeds = configSeeds(flags.seeds, config, flags.config);
    checkWork(config.base, config.policies, seeds.length, maxEvents(flags.maxEvents), `--config ${JSON.stringify(flags.config)}`, RAISE);
    const result = await runBudgetExperiment({ policies: configPolicies(config.base, config.policies), seeds, base: config.base, name: config.name, ...workers });
    printBudget(result, flags.format, `# budget, scenario "${config.name}": seeds ${seedText(seeds)}`, io);
    return;
  }
  if (flags.trace !== undefined) {
    traceCommand(flags, io);
    return;
  }
  if (flags.series !== undefined) throw new UsageError(`--series ${quote(flags.series)} picks a block of --trace: give --trace SEED too`);
  const seeds = parseSeeds(flags.seeds ?? '0-19');
  const policies = budgetPolicies(flags.policies === undefined ? BUDGET_POLICIES : parsePolicies(flags.policies));
  if (flags.grpcServiceConfig !== undefined) {
    const { policy, warnings } = grpcPolicy(flags.grpcServiceConfig);
    for (const w of warnings) io.err(`herdless-lab: warning: ${w}`);
    policies.push(policy);
  }
  // The article's scenario (the same for every policy): its clients, arrivals, server and horizon.
  checkWork(budgetScenario(policies[0]!), policies, seeds.length, maxEvents(flags.maxEvents), 'budget', RAISE);
  const result = await runBudgetExperiment({ policies, seeds, ...workers });
  printBudget(result, flags.format, budgetTitle(seedText(seeds)), io);
}

/** The blocks of `budget --trace`: `--series` prints one of them. */
const TRACE_SERIES = ['tokens', 'per-second'] as const;

/** `budget --trace SEED`: one seed's figure data, CSV (the default) or JSON, for every policy or those of `--policies`. */
function traceCommand(flags: BudgetFlags, io: Io): void {
  const trace = quote(flags.trace);
  const seed = [traceSeedOf(flags.trace!, flags.seeds)];
  if (flags.grpcServiceConfig !== undefined) throw new UsageError(`--trace ${trace} traces the article's policies: it cannot be combined with --grpc-service-config`);
  if (flags.formatGiven === true && flags.format === 'table') throw new UsageError(`--trace ${trace} prints CSV or JSON: --format table has no trace form (use --format csv or json)`);
  const series = flags.series === undefined ? undefined : parseNames('--series', 'series', flags.series, TRACE_SERIES);
  if (series !== undefined && series.length !== 1) throw new UsageError(`--series ${quote(flags.series)}: give one of ${TRACE_SERIES.join(', ')}`);
  const only = series?.[0];
  if (only === 'tokens' && flags.policies !== undefined) throw new UsageError('--series tokens traces gRPC throttling only: it cannot be combined with --policies');
  const data = budgetTrace(seed[0]!, only === 'tokens' ? [] : flags.policies === undefined ? BUDGET_POLICIES : parsePolicies(flags.policies));
  if (flags.format === 'json') {
    // The same document (and schema) as without --series: the block left out is an empty list.
    const json = budgetTraceJson(data) as { tokens: unknown[] };
    io.out(JSON.stringify(only === 'per-second' ? { ...json, tokens: [] } : json));
    return;
  }
  const [tokens, perSecond] = budgetTraceCsv(data).split('\n\n');
  io.out(only === 'tokens' ? tokens! : only === 'per-second' ? perSecond! : `${tokens}\n\n${perSecond}`);
}

function printBudget(result: Awaited<ReturnType<typeof runBudgetExperiment>>, format: Format, title: string, io: Io): void {
  if (format === 'json') io.out(JSON.stringify(budgetJson(result)));
  else if (format === 'csv') io.out(budgetCsv(result));
  else io.out(`${title}\n${budgetTable(result)}`);
}

interface FleetFlags {
  seeds?: string;
  policies?: string;
  processes?: string;
  lifetime?: string;
  flushInterval?: string;
  trace?: string;
  format: Format;
}

/** `fleet`: the budget table for a fleet of short-lived processes; `--trace SEED`: one seed's per-second data. */
function fleetCommand(flags: FleetFlags, io: Io): void {
  const policies = flags.policies === undefined ? [...FLEET_POLICIES] : parseNames<FleetPolicyName>('--policies', 'policy', flags.policies, FLEET_POLICIES);
  const processes = flags.processes === undefined ? FLEET_DEFAULTS.processes : parseNumberFlag('--processes', flags.processes, 1, 100_000, true);
  const lifetimeMs = flags.lifetime === undefined ? FLEET_DEFAULTS.lifetimeMs : parseNumberFlag('--lifetime', flags.lifetime, 0.01, 3600) * 1000;
  const flushIntervalMs = flags.flushInterval === undefined ? FLEET_DEFAULTS.flushIntervalMs : parseNumberFlag('--flush-interval', flags.flushInterval, 0, 60_000);
  if (flags.trace !== undefined) {
    const seed = [traceSeedOf(flags.trace, flags.seeds)];
    if (flags.format === 'table') throw new UsageError(`--trace ${JSON.stringify(flags.trace)} prints CSV or JSON: --format table has no trace form`);
    const trace = fleetTrace(seed[0]!, policies, { processes, lifetimeMs, flushIntervalMs });
    io.out(flags.format === 'json' ? JSON.stringify(fleetTraceJson(trace, { seeds: seed, processes, lifetimeMs, flushIntervalMs })) : fleetTraceCsv(trace));
    return;
  }
  const seeds = parseSeeds(flags.seeds ?? '0-19');
  const result = runFleetExperiment({ policies, seeds, processes, lifetimeMs, flushIntervalMs });
  if (flags.format === 'json') io.out(JSON.stringify(fleetJson(result)));
  else if (flags.format === 'csv') io.out(fleetCsv(result));
  else io.out(`${fleetTitle({ processes, lifetimeMs }, seedText(seeds))}\n${fleetTable(result)}`);
}

interface LayersFlags {
  depth?: string;
  attempts?: string;
  live?: boolean;
  format: Format;
  workers?: string;
}

async function layersCommand(flags: LayersFlags, io: Io): Promise<void> {
  workersOf(flags.workers); // checked like everywhere, but see the flag's help: nothing to spread

  const depth = flags.depth === undefined ? 3 : parseNumberFlag('--depth', flags.depth, 1, 10, true);
  const attempts = flags.attempts === undefined ? 3 : parseNumberFlag('--attempts', flags.attempts, 1, 10, true);
  const most = flags.live === true ? LIVE_LAYERS_MAX_CALLS : 100_000;
  if (attempts ** depth > most) {
    throw new UsageError(`--attempts ${attempts} --depth ${depth}: ${attempts}^${depth} calls is more than ${most}${flags.live === true ? ' (with --live)' : ''}`);
  }
  const rows = flags.live === true ? await runLiveLayers(depth, attempts) : await runLayers({ depth, attempts });
  if (flags.format === 'json') io.out(JSON.stringify(layersJson(rows)));
  else if (flags.format === 'csv') io.out(layersCsv(rows));
  else io.out(`${layersTitle(depth, attempts)}${flags.live === true ? LIVE_SUFFIX : ''}\n${layersTable(rows)}`);
}

/** The lab's version, from its package.json (dist/cli/ and src/cli/ are both two folders below it). */
function labVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** Builds the `herdless-lab` command line. */
export function buildProgram(io: Io): Command {
  const program = new Command('herdless-lab')
    .description('The herdless lab: the article\'s retry experiments, run with the library\'s own policy objects in virtual time.')
    .version(labVersion(), '-V, --version', 'print the version and exit')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.replace(/\n$/, '')), writeErr: () => {}, outputError: () => {} })
    .showSuggestionAfterError(true)
    .addHelpText('after', '\nWithout a command it runs `all`, which takes its options too: e.g. `herdless-lab --out report` (see `herdless-lab all --help`).');

  const format = choiceOption('--format <format>', 'output format', FORMATS, 'table');

  program
    .command('all', { isDefault: true })
    .description('run every experiment on its defaults, print the tables and write the report (what `npm run lab` does)')
    .addOption(textOption('--out <dir>', 'the report folder: index.html, figures/*.svg, data/*.json and *.csv', 'lab-out'))
    .addOption(new Option('--workers <n>', WORKERS_HELP))
    .option('--live', 'also run the live lab (real sockets, several minutes) and add its "On real sockets" section')
    .action(async (flags: { out: string; workers?: string; live?: boolean }, command: Command) => {
      const workers = workersOf(flags.workers);
      checkReportDir(flags.out); // before the runs, so a bad --out fails at once
      const results = new Map<string, unknown>();
      const live = flags.live === true ? await import('../report/live.js') : undefined;
      const experiments = live === undefined ? LAB_EXPERIMENTS : [...LAB_EXPERIMENTS, live.liveExperiment];
      for (const [i, experiment] of experiments.entries()) {
        const result = await experiment.run(workers);
        results.set(experiment.id, result);
        if (i > 0) io.out('');
        io.out(experiment.table(result));
      }
      const base = command.getOptionValueSource('out') === 'default' ? 'npm run lab' : `npm run lab -- --out ${shellQuote(flags.out)}`;
      const invocation = live === undefined ? base : `${base}${base === 'npm run lab' ? ' --' : ''} --live`;
      const files = await buildReport(experiments, live === undefined ? FIGURES : [...FIGURES, ...live.LIVE_FIGURES], results, { command: invocation });
      const index = writeReport(flags.out, files);
      io.out('');
      io.out(`report: ${index}`);
    });

  program
    .command('herd')
    .description('1,000 clients fail together: finish time, requests and crashes per strategy (the article\'s first table)')
    .option('--spread <seconds>', 'spread the first sends uniformly over this many seconds (the article\'s variant: 0.9)')
    .addOption(textOption('--seeds <list>', 'seeds, as ranges and lists: 0-19, 1,5,9', '0-19'))
    .option('--strategies <names>', `comma-separated: ${HERD_STRATEGIES.join(', ')}`)
    .option('--per-seed', 'also print every run')
    .option('--config <file>', 'a scenario file (JSON): clients, arrivals, server, horizon, policies, seeds — see docs/lab.md')
    .addOption(format)
    .option('--workers <n>', WORKERS_HELP)
    .option('--bins <ms>', 'print the arrivals per bin of this many ms (e.g. 100) of one seed\'s run per strategy, as CSV or JSON: the report\'s arrival figures; give one seed with --seeds')
    .option('--max-events <n>', `refuse a run estimated above this many request events (default ${MAX_EVENTS.toExponential().replace('e+', 'e')})`)
    .action(async (flags: HerdFlags, command: Command) => {
      // --seeds has a default; a config file's seeds win unless the flag was given.
      if (command.getOptionValueSource('seeds') === 'default') delete flags.seeds;
      await herdCommand({ ...flags, formatGiven: command.getOptionValueSource('format') === 'cli' }, io);
    });

  program
    .command('waits')
    .description('each client\'s successive waits, drawn by the herd strategies\' own backoff objects (CSV or JSON): the report\'s waits figure')
    .option('--strategies <names>', `comma-separated: ${HERD_STRATEGIES.join(', ')} (default: ${WAIT_STRATEGIES.join(', ')})`)
    .option('--clients <n>', 'clients per strategy (default 40)')
    .option('--failures <n>', 'failure counts 1..n (default 10)')
    .option('--seeds <n>', 'the seed of each strategy\'s PyRandom: one seed, as waits draws one set of waits (default 0)')
    .addOption(new Option('--format <format>', 'output format: csv or json').argParser(waitsFormat).default('csv'))
    .action((flags: WaitsFlags) => waitsCommand(flags, io));

  program
    .command('budget')
    .description('10 clients, the downstream down 5–15 s: load, crashes and recovery with and without retry budgets (the article\'s budget table)')
    .option('--seeds <list>', 'seeds, as ranges and lists: 0-19, 1,5,9 (default 0-19)')
    .option('--config <file>', 'a scenario file with an outage (JSON, see docs/lab.md): its policies, with budgets, in the budget table')
    .option('--policies <names>', `comma-separated: ${BUDGET_POLICIES.join(', ')}`)
    .option('--grpc-service-config <file>', 'add a row for the retryPolicy and retryThrottling of a gRPC service config (gRFC A6 JSON)')
    .option('--trace <seed>', "print one seed's figure data (CSV, or JSON with --format json): client 0's tokens per tick under gRPC throttling, per-second new/arrivals/successes/retries per policy (those of --policies, or all)")
    .option('--series <name>', `with --trace, print one block only: ${TRACE_SERIES.join(' or ')}`)
    .addOption(choiceOption('--format <format>', 'output format', FORMATS, 'table'))
    .option('--workers <n>', `${WORKERS_HELP}; --trace runs in this thread`)
    .option('--max-events <n>', `refuse a run estimated above this many request events (default ${MAX_EVENTS.toExponential().replace('e+', 'e')})`)
    .action(async (flags: BudgetFlags, command: Command) => budgetCommand({ ...flags, formatGiven: command.getOptionValueSource('format') === 'cli' }, io));

  program
    .command('fleet')
    .description('the budget outage sent by a fleet of short-lived processes (200 of 2 s each): per-process budgets against one shared budget (herdless/redis\'s model)')
    .option('--seeds <list>', 'seeds, as ranges and lists: 0-19, 1,5,9 (default 0-19)')
    .option('--policies <names>', `comma-separated: ${FLEET_POLICIES.join(', ')}`)
    .option('--processes <n>', 'processes alive at once (1–100000; default 200)')
    .option('--lifetime <seconds>', 'how long each process lives before a new one replaces it (default 2)')
    .option('--flush-interval <ms>', "the batched shared budgets' flushIntervalMs, as herdless/redis has it (0–60000; default 100)")
    .option('--trace <seed>', "print one seed's figure data (CSV, or JSON with --format json): per-second new/arrivals/successes/retries per policy")
    .addOption(choiceOption('--format <format>', 'output format', FORMATS, 'table'))
    .action(async (flags: FleetFlags, command: Command) => {
      // A trace prints CSV unless --format was given.
      if (flags.trace !== undefined && command.getOptionValueSource('format') !== 'cli') flags.format = 'csv';
      fleetCommand(flags, io);
    });

  program
    .command('layers')
    .description('calls reaching each service when every layer retries, and under the one-layer rule ("overloaded; don\'t retry")')
    .addOption(textOption('--depth <n>', 'services in the chain (1–10), the last always failing', '3'))
    .addOption(textOption('--attempts <n>', 'maxAttempts of every caller (1–10), the first try included', '3'))
    .option('--live', `run the chain on real sockets: node:http servers on 127.0.0.1, herdless's retrying fetch and herdless/server, requests counted by the servers (attempts^depth ≤ ${LIVE_LAYERS_MAX_CALLS})`)
    .addOption(choiceOption('--format <format>', 'output format', FORMATS, 'table'))
    .option('--workers <n>', 'accepted like the other commands (0–64) and checked, but layers always runs in this thread: it is one chain of at most 100000 calls in virtual time, with nothing to spread over threads')
    .action(async (flags: LayersFlags) => layersCommand(flags, io));

  program
    .command('serve')
    .description('serve the interactive lab page on 127.0.0.1: pick a policy, run it in the browser (Ctrl+C stops)')
    .addOption(textOption('--port <n>', 'the port (0 = any free port; without --port: 8000, or any free port when 8000 is taken)', '8000'))
    .action(async (flags: { port: string }, command: Command) => {
      const port = parseNumberFlag('--port', flags.port, 0, 65535, true);
      const { startServer } = await import('../serve.js'); // the page's bundles are read only for this command
      const server = await startServer(port, { orAnyFreePort: command.getOptionValueSource('port') === 'default' });
      if (server.movedFrom !== undefined) io.out(`port ${server.movedFrom} is in use: serving on a free port instead`);
      io.out(`lab page: ${server.url} (Ctrl+C stops)`);
      const signal = await new Promise<string>((resolve) => {
        process.once('SIGINT', () => resolve('SIGINT'));
        process.once('SIGTERM', () => resolve('SIGTERM'));
      });
      await server.close();
      io.out(`stopped (${signal})`);
    });

  addModelCommands(program, { ...io, parseNumber: parseNumberFlag, parseNames });
  addLiveCommands(program, { ...io, parseNumber: parseNumberFlag, parseNames });
  addHedgingCommand(program, { ...io, parseNumber: parseNumberFlag, parseNames });

  return program;
}
