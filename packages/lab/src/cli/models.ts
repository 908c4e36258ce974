import type { Command } from 'commander';
import { CONTENTION_STRATEGIES, METASTABLE_POLICIES, METASTABLE_SERVERS, metastableCombinations, metastableSetup } from 'herdless/sim';
import { CONTENTION_DEFAULTS, contentionCsv, contentionJson, contentionTable, contentionTitle, runContentionExperiment } from '../experiments/contention.js';
import type { LiveCli } from '../live/commands.js';
import { metastableCsv, metastableDefaults, metastableJson, metastableTable, metastableTitle, metastableTrace, runMetastableExperiment, type MetastableSettings } from '../experiments/metastable.js';
import { LAB_JSON_SCHEMA_VERSION } from '../experiments/schema-version.js';
import { rowsToCsv } from '../charts/series.js';
import { loadMetastableConfig } from '../metastable-config-file.js';
import { quote } from '../text.js';
import { UsageError } from '../usage-error.js';
import { parseSeeds } from '../seeds.js';
import { closestName } from '../closest.js';
import { FORMATS, canonicalName, choiceOption, traceSeedOf } from './names.js';

/** The most clients one contention run may have: no backoff costs about 0.3 × clients² writes a run. */
export const CONTENTION_MAX_CLIENTS = 1000;

/** The bound on seeds × strategies × Σ clients²: about 360 times the default table, a few minutes. */
const CONTENTION_MAX_WORK = 1e9;

/** `--clients 10,20,30`: distinct integers from 1 to {@link CONTENTION_MAX_CLIENTS}, in the order given. @throws UsageError naming the flag. */
export function parseClientCounts(text: string): number[] {
  const parts = text.split(',').map((s) => s.trim());
  const counts = parts.map(Number);
  parts.forEach((p, i) => {
    const n = counts[i]!;
    if (!/^\d+$/.test(p) || n < 1 || n > CONTENTION_MAX_CLIENTS) {
      throw new UsageError(`--clients ${quote(text)}: ${quote(p)} is not a client count (integers from 1 to ${CONTENTION_MAX_CLIENTS}, comma-separated, e.g. 10,20,30)`);
    }
  });
  if (new Set(counts).size !== counts.length) throw new UsageError(`--clients ${quote(text)}: a count is listed twice`);
  return counts;
}

interface MetastableFlags {
  seeds?: string;
  config?: string;
  policies?: string;
  servers?: string;
  trigger?: string;
  trace?: string;
  format: 'table' | 'json' | 'csv';
  formatGiven?: boolean;
}

/** What `--trigger` names: the server slowed down, or a load spike. */
const TRIGGERS = ['capacity', 'spike'] as const;

const POLICY_NAMES = METASTABLE_POLICIES.map((p) => p.name);
const SERVER_NAMES = Object.keys(METASTABLE_SERVERS);

/** The settings of a metastable command: the default table, a scenario file, or the flags' cross of policies and servers. */
export function metastableSettings(flags: MetastableFlags, cli: LiveCli): MetastableSettings {
  if (flags.config !== undefined) {
    if (flags.policies !== undefined || flags.servers !== undefined || flags.trigger !== undefined) {
      throw new UsageError('--config runs the file\'s own policies, servers and trigger: it cannot be combined with --policies, --servers or --trigger');
    }
    const config = loadMetastableConfig(flags.config);
    const seeds = flags.seeds !== undefined ? parseSeeds(flags.seeds) : (config.seeds ?? metastableDefaults().seeds);
    return { ...config.settings, seeds };
  }
  const defaults = metastableDefaults();
  const seeds = flags.seeds === undefined ? defaults.seeds : parseSeeds(flags.seeds);
  const setup = flags.trigger === undefined ? defaults.setup : metastableSetup({ trigger: { kind: cli.parseNames('--trigger', 'trigger', flags.trigger, TRIGGERS)[0]! } });
  if (flags.policies === undefined && flags.servers === undefined) return { setup, seeds, combinations: metastableCombinations() };
  const policies = flags.policies === undefined ? POLICY_NAMES : cli.parseNames('--policies', 'policy', flags.policies, POLICY_NAMES);
  const servers = flags.servers === undefined ? ['FIFO'] : cli.parseNames('--servers', 'server', flags.servers, SERVER_NAMES);
  const combinations = servers.flatMap((server) => policies.map((name) => ({ policy: METASTABLE_POLICIES.find((p) => p.name === name)!, server, overrides: METASTABLE_SERVERS[server]! })));
  return { setup, seeds, combinations };
}

function metastableCommand(flags: MetastableFlags, cli: LiveCli): void {
  if (flags.trigger !== undefined && canonicalName(flags.trigger.trim(), TRIGGERS) === undefined) {
    const near = closestName(flags.trigger.trim(), TRIGGERS);
    const hint = near === undefined ? '' : ` (did you mean ${near}?)`;
    throw new UsageError(`--trigger ${quote(flags.trigger)}: expected capacity (the server at half speed 10–15 s) or spike (new requests at twice the rate 10–15 s)${hint}`);
  }
  if (flags.trace !== undefined) {
    const seed = traceSeedOf(flags.trace, flags.seeds);
    if (flags.formatGiven === true && flags.format === 'table') throw new UsageError(`--trace ${quote(flags.trace)} prints CSV or JSON: --format table has no trace form (use --format csv or json)`);
    const settings = metastableSettings(flags, cli);
    const rows = metastableTrace(settings, seed);
    cli.out(flags.format === 'json' ? JSON.stringify({ schemaVersion: LAB_JSON_SCHEMA_VERSION, experiment: 'metastable-trace', seed, setup: settings.setup, seconds: rows }) : rowsToCsv(rows));
    return;
  }
  const settings = metastableSettings(flags, cli);
  const result = runMetastableExperiment(settings);
  if (flags.format === 'json') cli.out(JSON.stringify(metastableJson(result)));
  else if (flags.format === 'csv') cli.out(metastableCsv(result));
  else cli.out(`${metastableTitle(settings)}\n${metastableTable(result)}`);
}

/** Adds the commands of the lab's server-failure models (contention, metastable) to the program. */
export function addModelCommands(program: Command, cli: LiveCli): void {
  program
    .command('contention')
    .description('clients contend for one row under optimistic concurrency (Brooker 2015): mean time and calls per backoff against the number of clients')
    .option('--seeds <list>', 'seeds, as ranges and lists: 0-99, 1,5,9 (default 0-99; run r draws from CPython\'s random.Random(r))')
    .option('--clients <list>', `client counts, comma-separated, 1–${CONTENTION_MAX_CLIENTS} (default ${CONTENTION_DEFAULTS.clients.join(',')})`)
    .option('--strategies <names>', `comma-separated: ${CONTENTION_STRATEGIES.join(', ')}`)
    .addOption(choiceOption('--format <format>', 'output format', FORMATS, 'table'))
    .action((flags: { seeds?: string; clients?: string; strategies?: string; format: 'table' | 'json' | 'csv' }) => {
      const settings = {
        seeds: flags.seeds === undefined ? CONTENTION_DEFAULTS.seeds : parseSeeds(flags.seeds),
        clients: flags.clients === undefined ? CONTENTION_DEFAULTS.clients : parseClientCounts(flags.clients),
        strategies: flags.strategies === undefined ? CONTENTION_STRATEGIES : cli.parseNames('--strategies', 'strategy', flags.strategies, CONTENTION_STRATEGIES),
      };
      // A run's writes grow with clients² (no backoff: about 0.3 × clients²); bound the table's work.
      const work = settings.seeds.length * settings.strategies.length * settings.clients.reduce((a, n) => a + n * n, 0);
      if (work > CONTENTION_MAX_WORK) {
        throw new UsageError(
          `--seeds/--clients: seeds × strategies × the sum of clients² is ${work.toExponential(2).replace('e+', 'e')}; keep it ≤ 1e9 (the default table's is 2.75e6 and takes under a second)`,
        );
      }
      const result = runContentionExperiment(settings);
      if (flags.format === 'json') cli.out(JSON.stringify(contentionJson(result)));
      else if (flags.format === 'csv') cli.out(contentionCsv(result));
      else cli.out(`${contentionTitle(settings.seeds)}\n${contentionTable(result)}`);
    });

  program
    .command('metastable')
    .description('a queueing server, clients that time out and retry, a trigger of a few seconds: which policies and servers recover by themselves, and which stay down (metastable)')
    .option('--seeds <list>', 'seeds, as ranges and lists: 0-19, 1,5,9 (default 0-19)')
    .option('--config <file>', 'a metastable scenario file (JSON, see docs/lab.md): setup, trigger, policies and server variants, seeds')
    .option('--policies <names>', `cross these policies with --servers (default all): ${POLICY_NAMES.join(', ')}`)
    .option('--servers <names>', `cross these server variants with --policies (default FIFO): ${SERVER_NAMES.join(', ')}`)
    .option('--trigger <kind>', 'capacity (default: the server at half speed 10–15 s) or spike (new requests at twice the rate 10–15 s)')
    .option('--trace <seed>', "print one seed's per-second series (CSV, or JSON with --format json): new, offered, goodput, queue, wasted, shed per combination")
    .addOption(choiceOption('--format <format>', 'output format', FORMATS, 'table'))
    .action((flags: MetastableFlags, command: Command) => {
      if (flags.trace !== undefined && command.getOptionValueSource('format') !== 'cli') flags.format = 'csv';
      metastableCommand({ ...flags, formatGiven: command.getOptionValueSource('format') === 'cli' }, cli);
    });
}
