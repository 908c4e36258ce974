import type { Command } from 'commander';
import { ARTICLE_SERVER, BUDGET_POLICIES, HERD_STRATEGIES, TAIL_SECONDS, formatFixed, metastableSetup, type BudgetPolicyName, type HerdStrategy, type ServerModel } from 'herdless/sim';
import { loadConfig } from '../config-file.js';
import { parseSeeds } from '../seeds.js';
import { UsageError } from '../usage-error.js';
import { quote } from '../text.js';
import { closestName } from '../closest.js';
import { FORMATS, choiceOption, parseOneSeed, textOption } from '../cli/names.js';
// The live runs (and undici, ~0.1 s to load) are imported when one starts, so the lab's start-up
// (`--help`, the simulated commands) never pays for them.
import type { LiveSettings } from './experiments.js';
import { RESET_PATH, STATS_PATH, startLiveServer, type LabServer } from './server.js';
import { startQueueServer, type QueueServerModel } from './queue-server.js';
import { loadMetastableConfig } from '../metastable-config-file.js';

const HERD_HORIZON_S = 30;
const BUDGET_HORIZON_S = 40;

/** What the live commands need from the CLI: its output and its flag parsers (one set of rules for every command). */
export interface LiveCli {
  out: (text: string) => void;
  err: (text: string) => void;
  parseNumber: (flag: string, text: string, min: number, max: number, integer?: boolean) => number;
  parseNames: <N extends string>(flag: string, noun: string, text: string, allowed: readonly N[]) => N[];
}

/** `--outage 5-15`: seconds, start before end. @throws UsageError naming the flag and the value. */
export function parseOutage(text: string): { startMs: number; endMs: number } {
  const m = /^\s*(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)\s*$/.exec(text);
  const start = m ? Number(m[1]) : NaN;
  const end = m ? Number(m[2]) : NaN;
  if (!m || !(end > start) || end > 86_400) throw new UsageError(`--outage ${JSON.stringify(text)}: expected START-END in seconds, START < END ≤ 86400 (e.g. 5-15)`);
  return { startMs: Math.round(start * 1000), endMs: Math.round(end * 1000) };
}

/** The server model of `lab server`: the article's, a scenario file's server, then the flags over it. */
function serverModel(flags: ServerFlags, cli: LiveCli): ServerModel {
  const base: ServerModel = flags.config === undefined ? ARTICLE_SERVER : loadConfig(flags.config).base.server;
  const startupMs = flags.startup === undefined ? base.startupMs : Math.round(cli.parseNumber('--startup', flags.startup, 0, 3600) * 1000);
  const outages = flags.outage === undefined ? base.outages : flags.outage.map(parseOutage);
  return { ...base, startupMs, outages };
}

function describeModel(m: ServerModel): string {
  const s = (x: number): string => `${formatFixed(x / 1000, 3).replace(/\.?0+$/, '')} s`;
  const outages = m.outages.length === 0 ? 'none' : m.outages.map((o) => `${s(o.startMs)}–${s(o.endMs)}`).join(', ');
  return (
    `model: ${m.capacityPerTick} served per ${m.tickMs} ms tick (first come, first served), ` +
    `a crash above ${m.crashLimit} arrivals in ${m.crashWindowTicks * m.tickMs} ms (down ${s(m.restartMs)}), start-up ${s(m.startupMs)}, outages ${outages}`
  );
}

interface ServerFlags {
  port: string;
  model: 'article' | 'metastable';
  config?: string;
  startup?: string;
  outage?: string[];
  seeds?: string;
}

/** The queue model of `lab server --model metastable`: the live lab's setup, or a metastable scenario file's server and trigger. */
async function queueServerModel(flags: ServerFlags): Promise<QueueServerModel> {
  if (flags.startup !== undefined || flags.outage !== undefined) throw new UsageError('--startup and --outage belong to the article\'s server: --model metastable has a trigger instead (set it in --config)');
  const { LIVE_METASTABLE_SETUP } = await import('./queue-experiment.js');
  const setup = flags.config === undefined ? LIVE_METASTABLE_SETUP : loadMetastableConfig(flags.config).settings.setup;
  const seed = flags.seeds === undefined ? 0 : parseOneSeed(flags.seeds, 'the server draws its service times from one seed');
  return { server: setup.server, trigger: setup.trigger, seed };
}

function describeQueueModel(m: QueueServerModel): string {
  const v = m.server;
  const t = m.trigger;
  const s = (x: number): string => `${formatFixed(x / 1000, 3).replace(/\.?0+$/, '')} s`;
  const protections = [v.dropExpired ? 'drops expired requests' : '', v.shedding ? "herdless/server's shedding in front" : ''].filter((x) => x !== '').join(', ');
  return (
    `model: metastable queue, ${v.workers} workers, service ${v.service} mean ${formatFixed(v.serviceMs, 0)} ms, ${v.discipline.toUpperCase()}${protections === '' ? '' : `, ${protections}`}; ` +
    `trigger: ${t.kind === 'capacity' ? `the server at ${t.factor}× speed ${s(t.startMs)}–${s(t.endMs)}` : 'a spike (the clients\' doing: none at the server)'}; seed ${m.seed} (POST ${RESET_PATH} with {server?, trigger?, seed?} changes them)`
  );
}

interface LiveFlags {
  target?: string;
  clients?: string;
  horizon?: string;
  seeds: string;
  simSeeds: string;
  format: 'table' | 'json' | 'csv';
}

function liveSettings(flags: LiveFlags, defaults: { clients: number; horizonS: number; minHorizonS: number }, cli: LiveCli): LiveSettings {
  const clients = flags.clients === undefined ? defaults.clients : cli.parseNumber('--clients', flags.clients, 1, 10_000, true);
  const horizonS = flags.horizon === undefined ? defaults.horizonS : cli.parseNumber('--horizon', flags.horizon, defaults.minHorizonS, 3600);
  if (Math.round(horizonS * 100) !== horizonS * 100) throw new UsageError(`--horizon ${JSON.stringify(flags.horizon)}: expected whole ticks (at most 2 decimals)`);
  // One live run per strategy or policy: the simulator's runs beside it take a list (--sim-seeds).
  const seed = parseOneSeed(flags.seeds, 'a live run draws its waits from one seed (the simulator\'s seeds beside it are --sim-seeds)');
  return { target: flags.target, clients, horizonMs: Math.round(horizonS * 1000), seed, simSeeds: parseSeeds(flags.simSeeds, '--sim-seeds'), progress: cli.err };
}

/**
 * Runs a started lab server until SIGINT or SIGTERM: prints its address and model, then, stopped,
 * closes it and prints what it served since time 0 (`totals` says what in its model's words).
 */
async function serveUntilStopped<S>(cli: LiveCli, server: LabServer<S>, model: string, totals: (stats: S) => string): Promise<void> {
  // Listen for the signals before printing the address: whoever reads it may stop the server at once.
  const stopped = new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  cli.out(`lab server: ${server.url} (stats: ${new URL(STATS_PATH, server.url).href}, POST ${RESET_PATH} restarts its time; Ctrl+C stops)`);
  cli.out(model);
  const signal = await stopped;
  const stats = server.stats();
  await server.close();
  cli.out(`stopped (${signal}): ${totals(stats)} since time 0`);
}

/** Adds `server` and `live herd|budget` to the lab's command line. */
export function addLiveCommands(program: Command, cli: LiveCli): void {
  program
    .command('server')
    .description('a lab server model as a real HTTP server on 127.0.0.1 — the article\'s (200 or 503 to any request) or, with --model metastable, the metastable queue — stats as JSON at /_lab/stats (Ctrl+C stops)')
    .addOption(textOption('--port <n>', 'the port (0 = any free port, printed)', '0'))
    .addOption(choiceOption('--model <model>', 'article: the article\'s crashing server; metastable: the metastable experiment\'s queue (workers, service times, FIFO/LIFO, drop expired, shedding, trigger)', ['article', 'metastable'] as const, 'article'))
    .option('--config <file>', 'take the server model from a scenario file: the "server" of a herd/budget file (article), or the server and trigger of a metastable file')
    .option('--seeds <n>', 'the seed of the service times: one seed (metastable; default 0)')
    .option('--startup <seconds>', 'starting up (every request 503, not a crash) for this long from time 0 (article: 1)')
    .option('--outage <start-end>', 'a downstream outage in seconds from time 0, e.g. 5-15 (repeat for more)', (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
    .action(async (flags: ServerFlags) => {
      const port = cli.parseNumber('--port', flags.port, 0, 65535, true);
      if (flags.model === 'metastable') {
        const queue = await queueServerModel(flags);
        await serveUntilStopped(cli, await startQueueServer(queue, port), describeQueueModel(queue), ({ totals }) => `${totals.arrivals} arrivals, ${totals.served} served in time, ${totals.wasted} wasted, ${totals.shed} shed`);
        return;
      }
      if (flags.seeds !== undefined) throw new UsageError('--seeds: the article\'s server draws nothing (it belongs to --model metastable)');
      const model = serverModel(flags, cli);
      await serveUntilStopped(cli, await startLiveServer(model, port), describeModel(model), ({ totals }) => `${totals.arrivals} arrivals, ${totals.successes} served, ${totals.crashes} crashes`);
    });

  const print = <R>(format: LiveFlags['format'], result: R, as: { table: (r: R) => string; json: (r: R) => object; csv: (r: R) => string }): void =>
    cli.out(format === 'json' ? JSON.stringify(as.json(result)) : format === 'csv' ? as.csv(result) : as.table(result));

  const live = program
    .command('live')
    .description('the article\'s experiments on real sockets: the library\'s retrying fetch as N clients against a lab server (or --target), beside the simulator')
    .action((_flags: object, command: Command) => {
      const [name] = command.args;
      const experiments = command.commands.map((c) => c.name());
      const near = name === undefined ? undefined : closestName(name, experiments);
      if (name !== undefined && !name.startsWith('-')) throw new UsageError(`live: unknown experiment ${quote(name)} (${near === undefined ? `experiments: ${experiments.join(', ')}; see \`live herd --help\`` : `did you mean ${near}?`})`);
      throw new UsageError('live: name the experiment: `live herd`, `live budget` or `live metastable` (see `live herd --help`)');
    });
  const common = (command: Command, what: string, horizonS: number): Command =>
    command
      .option('--target <url>', `send to this server instead of starting a lab server (http or https; ${what})`)
      .option('--horizon <seconds>', `each run stops by itself here (default ${horizonS})`)
      .addOption(textOption('--seeds <n>', 'the seed of the live runs\' waits (and arrivals): one seed', '0'))
      .addOption(textOption('--sim-seeds <list>', 'the simulator\'s seeds for the side-by-side figures, as ranges and lists: 0-19, 1,5,9', '0-19'))
      .addOption(choiceOption('--format <format>', 'output format', FORMATS, 'table'));

  common(
    live
      .command('herd')
      .description('1,000 clients fail together at t = 0 on real sockets, per strategy; immediate is left out by default (100,000 requests a second would measure the machine)')
      .option('--strategies <names>', `comma-separated: ${HERD_STRATEGIES.join(', ')} (default: all but immediate)`)
      .option('--clients <n>', 'clients (default 1000)'),
    'crashes are known only for a lab server',
    HERD_HORIZON_S,
  ).action(async (flags: LiveFlags & { strategies?: string }) => {
    const live = await import('./experiments.js');
    const strategies: HerdStrategy[] = flags.strategies === undefined ? [...live.LIVE_HERD_STRATEGIES] : cli.parseNames('--strategies', 'strategy', flags.strategies, HERD_STRATEGIES);
    const settings = liveSettings(flags, { clients: 1000, horizonS: HERD_HORIZON_S, minHorizonS: 0.01 }, cli);
    const result = await live.runLiveHerd(strategies, settings);
    print(flags.format, result, { table: live.liveHerdTable, json: live.liveHerdJson, csv: live.liveHerdCsv });
  });

  common(
    live
      .command('budget')
      .description('the article\'s 10 clients, ~300 new requests a second, downstream down 5–15 s, on real sockets, per policy (40 s each)')
      .option('--policies <names>', `comma-separated: ${BUDGET_POLICIES.join(', ')} (default: the first five)`)
      .option('--clients <n>', 'clients, 30 new requests a second each (default 10)'),
    'it must be down from 5 s to 15 s after the run starts for the figures to mean anything',
    BUDGET_HORIZON_S,
  ).action(async (flags: LiveFlags & { policies?: string }) => {
    const live = await import('./experiments.js');
    const policies: BudgetPolicyName[] = flags.policies === undefined ? [...live.LIVE_BUDGET_POLICIES] : cli.parseNames('--policies', 'policy', flags.policies, BUDGET_POLICIES);
    // The measures look at 15 s + 3 s after the outage.
    const settings = liveSettings(flags, { clients: 10, horizonS: BUDGET_HORIZON_S, minHorizonS: 18 }, cli);
    const result = await live.runLiveBudget(policies, settings);
    print(flags.format, result, { table: live.liveBudgetTable, json: live.liveBudgetJson, csv: live.liveBudgetCsv });
  });

  live
    .command('metastable')
    .description('the metastable queue on real sockets beside the simulator: open-loop clients that time out and retry against a queueing lab server, a trigger, and which policies and servers recover (30 s per combination)')
    .option('--target <url>', 'send to this server instead of starting a lab server (a `lab server --model metastable` is reset to each run\'s server variant; any other server must bring its own trigger)')
    .option('--horizon <seconds>', 'each run\'s length, whole seconds (default 30)')
    .addOption(textOption('--seeds <n>', 'the seed of the live runs\' arrivals, jitter and service times: one seed', '0'))
    .addOption(textOption('--sim-seeds <list>', 'the simulator\'s seeds for the side-by-side figures, as ranges and lists: 0-19, 1,5,9', '0-19'))
    .option('--policies <names>', 'cross these policies with --servers: the simulator\'s metastable policies and "3 retries + adaptive throttling"')
    .option('--servers <names>', 'cross these server variants with --policies (default FIFO): FIFO, LIFO, drop expired, shedding')
    .option('--trigger <kind>', 'capacity (default: the server at half speed 5–10 s) or spike (new requests at twice the rate 5–10 s)')
    .option('--config <file>', 'a metastable scenario file (setup, trigger, policies, servers) in place of the live setup')
    .addOption(choiceOption('--format <format>', 'output format', FORMATS, 'table'))
    .action(async (flags: LiveFlags & { policies?: string; servers?: string; trigger?: string; config?: string }) => {
      const q = await import('./queue-experiment.js');
      let setup = q.LIVE_METASTABLE_SETUP;
      let combinations;
      if (flags.config !== undefined) {
        if (flags.policies !== undefined || flags.servers !== undefined || flags.trigger !== undefined) {
          throw new UsageError('--config runs the file\'s own policies, servers and trigger: it cannot be combined with --policies, --servers or --trigger');
        }
        const config = loadMetastableConfig(flags.config).settings;
        setup = config.setup;
        combinations = config.combinations;
      } else {
        const names = (flag: string, noun: string, text: string | undefined, allowed: readonly string[]) => (text === undefined ? undefined : cli.parseNames(flag, noun, text, allowed));
        combinations = q.liveMetastableCross(
          names('--policies', 'policy', flags.policies, q.LIVE_METASTABLE_POLICIES.map((p) => p.name)),
          names('--servers', 'server', flags.servers, q.LIVE_METASTABLE_SERVERS),
        );
        if (flags.trigger !== undefined) {
          const [kind] = cli.parseNames('--trigger', 'trigger', flags.trigger, ['capacity', 'spike'] as const);
          setup = { ...setup, trigger: { ...setup.trigger, kind: kind!, factor: kind === 'spike' ? 2 : 0.5 } };
        }
      }
      if (flags.horizon !== undefined) {
        // The table's tail columns and its verdicts read the last TAIL_SECONDS: they must lie after the
        // trigger, or a shorter run would show the trigger itself as the state the server stays in.
        const min = Math.ceil(setup.trigger.endMs / 1000) + TAIL_SECONDS;
        const horizonS = cli.parseNumber('--horizon', flags.horizon, min, 3600, true);
        setup = metastableSetup({ ...setup, horizonMs: horizonS * 1000 });
      }
      const seed = parseOneSeed(flags.seeds, 'a live run draws its arrivals and service times from one seed (the simulator\'s seeds beside it are --sim-seeds)');
      const result = await q.runLiveMetastable({ target: flags.target, setup, combinations, seed, simSeeds: parseSeeds(flags.simSeeds, '--sim-seeds'), progress: cli.err });
      print(flags.format, result, { table: q.liveMetastableTable, json: q.liveMetastableJson, csv: q.liveMetastableCsv });
    });

  // A misspelt experiment reaches live's own action, which names it (commander would say only "too
  // many arguments"). Set after the subcommands: they inherit it when created, and `live herd x`
  // must stay an error.
  live.allowExcessArguments();
  // And with the experiment's options after it (`live budgett --seeds 1`), which are live's own unknowns.
  live.allowUnknownOption();
}
