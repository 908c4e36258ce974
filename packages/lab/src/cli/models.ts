import { type Command, Option } from 'commander';
import { CONTENTION_STRATEGIES } from 'herdless/sim';
import { CONTENTION_DEFAULTS, contentionCsv, contentionJson, contentionTable, contentionTitle, runContentionExperiment } from '../experiments/contention.js';
import type { LiveCli } from '../live/commands.js';
import { quote } from '../text.js';
import { UsageError } from '../usage-error.js';
import { parseSeeds } from './seeds.js';

/** The most clients one contention run may have: no backoff costs about 0.3 × clients² writes a run. */
export const CONTENTION_MAX_CLIENTS = 1000;

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

/** Adds the commands of the lab's server-failure models (contention) to the program. */
export function addModelCommands(program: Command, cli: LiveCli): void {
  program
    .command('contention')
    .description('clients contend for one row under optimistic concurrency (Brooker 2015): mean time and calls per backoff against the number of clients')
    .option('--seeds <list>', 'seeds, as ranges and lists: 0-99, 1,5,9 (default 0-99; run r draws from CPython\'s random.Random(r))')
    .option('--clients <list>', `client counts, comma-separated, 1–${CONTENTION_MAX_CLIENTS} (default ${CONTENTION_DEFAULTS.clients.join(',')})`)
    .option('--strategies <names>', `comma-separated: ${CONTENTION_STRATEGIES.join(', ')}`)
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json', 'csv']).default('table'))
    .action((flags: { seeds?: string; clients?: string; strategies?: string; format: 'table' | 'json' | 'csv' }) => {
      const settings = {
        seeds: flags.seeds === undefined ? CONTENTION_DEFAULTS.seeds : parseSeeds(flags.seeds),
        clients: flags.clients === undefined ? CONTENTION_DEFAULTS.clients : parseClientCounts(flags.clients),
        strategies: flags.strategies === undefined ? CONTENTION_STRATEGIES : cli.parseNames('--strategies', 'strategy', flags.strategies, CONTENTION_STRATEGIES),
      };
      const result = runContentionExperiment(settings);
      if (flags.format === 'json') cli.out(JSON.stringify(contentionJson(result)));
      else if (flags.format === 'csv') cli.out(contentionCsv(result));
      else cli.out(`${contentionTitle(settings.seeds)}\n${contentionTable(result)}`);
    });
}
