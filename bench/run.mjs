// `npm run bench`: every benchmark of the project, printed as Markdown (BENCHMARKS.md is pasted
// from this output). Never part of `npm test`.
//
//   npm run bench                     the full run (about 2–3 minutes on 2 cores)
//   BENCH_QUICK=1 npm run bench       a quick pass for development (fewer rounds, fewer calls)
//   BENCH_ONLY=success,zero npm run bench   some sections: success, instructions, zero, heap, decisions, overload, herd, scale,
//                                           redis, adapters, adapter-instructions (valgrind: several minutes)
//
// Needs `node --expose-gc` (the npm script passes it): mitata collects garbage between cases.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { benchAdapterInstructions } from './adapter-instructions.mjs';
import { adapterBatch } from './adapters.mjs';
import { benchHeap } from './heap.mjs';
import { benchHerdScale } from './herd-scale.mjs';
import { benchHerdTable } from './herd-table.mjs';
import { SEMI_SPACE_MIB, benchInstructions, benchOverloadInstructions } from './instructions.mjs';
import { mmm, pool, spread, times } from './lib/harness.mjs';
import { cockatielEquivalent, heapLabels } from './lib/subjects.mjs';
import { adapterPairs } from './lib/adapter-subjects.mjs';
import { SHEDDER_BASELINE, THROTTLE_BASELINE } from './lib/overload-subjects.mjs';

const quick = process.env.BENCH_QUICK === '1' || process.argv.includes('--quick');
const only = new Set((process.env.BENCH_ONLY ?? 'success,instructions,zero,heap,decisions,overload,herd,scale,redis,adapters,adapter-instructions').split(','));
// In-process sections run in `processes` fresh processes of `rounds` rounds each, pooled.
const settings = quick
  ? { processes: 1, rounds: 3, decisionRounds: 2, minCpuMs: 40, heapRounds: 1, heapCalls: 200_000, herdRounds: 2, scaleRounds: 1, instructionRepeats: 1, instructionCalls: [20_000, 60_000] }
  : { processes: 3, rounds: 6, decisionRounds: 3, minCpuMs: 25, heapRounds: 2, heapCalls: 1_000_000, herdRounds: 5, scaleRounds: 3, instructionRepeats: 3, instructionCalls: [50_000, 150_000] };
const BARE = 'bare await op()';

/** Runs an in-process section in `settings.processes` fresh processes, one after another. */
async function inProcesses(section, rounds = settings.rounds) {
  const child = new URL('./section-child.mjs', import.meta.url).pathname;
  const options = JSON.stringify({ rounds, minCpuMs: settings.minCpuMs });
  const results = [];
  for (let p = 0; p < settings.processes; p++) {
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', child, section, options], { maxBuffer: 16 << 20 });
    results.push(JSON.parse(stdout.trim().split('\n').pop()));
  }
  return results;
}

/** CPython's run of the same herd model, full table (the article's lab), in seconds. */
const CPYTHON_HERD_TABLE_S = 37;

const out = [];
const print = (line = '') => {
  out.push(line);
  console.log(line);
};
const table = (head, rows) => {
  print(`| ${head.join(' | ')} |`);
  print(`|${head.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`);
  for (const row of rows) print(`| ${row.join(' | ')} |`);
  print();
};
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(2)} MiB`;
const results = { quick, settings, started: new Date().toISOString() };
const timings = {};

const cpus = os.cpus();
print(`# herdless benchmarks${quick ? ' (quick mode)' : ''}`);
print();
print(
  `node ${process.version}, ${os.platform()} ${os.arch()}, ${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores ` +
    `(availableParallelism ${os.availableParallelism()}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB; ` +
    `load average at start ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`,
);
print(
  `in-process comparisons: ${settings.processes} fresh process${settings.processes > 1 ? 'es' : ''} × ${settings.rounds} rounds × ${settings.minCpuMs} ms ` +
    `per case per round (order rotated each round, after one uncounted warm-up round), ${defaultClockLabel()} clock; ` +
    `figures are the median (min–max) over all ${settings.processes * settings.rounds} rounds, ratios taken within each round`,
);
print();
const t0 = performance.now();

if (only.has('success')) {
  const started = performance.now();
  const r = (results.success = pool(await inProcesses('success'), BARE));
  // Each herdless subject against its cockatiel counterpart (prepared, or built per call); the rest against cockatiel's prepared retry.
  const cockatielOf = (name) => r[cockatielEquivalent[name] ?? 'cockatiel 3 retry().execute(op)'];
  print('## 1. Success path: one successful call');
  print();
  table(
    ['subject', 'ns per call', '× bare', '× cockatiel', '× bare, fastest rounds', '× cockatiel, fastest rounds'],
    Object.entries(r).map(([name, x]) => [
      name,
      mmm(x.ns),
      mmm(x.ratio, times),
      mmm(spread(x.rounds.map((v, i) => v / cockatielOf(name).rounds[i])), times),
      times(x.ns.min / r[BARE].ns.min),
      times(x.ns.min / cockatielOf(name).ns.min),
    ]),
  );
  print(
    '× columns: the ratio within each round (median, min–max over rounds); "fastest rounds": the ratio of the two ' +
      'subjects’ fastest rounds, i.e. of their least disturbed measurements.',
  );
  print();
  timings.success = performance.now() - started;
}

if (only.has('instructions')) {
  const started = performance.now();
  const r = (results.instructions = await benchInstructions({ repeats: settings.instructionRepeats, calls: settings.instructionCalls }));
  print('## 1b. Success path in machine instructions and bytes allocated (valgrind: figures noise cannot move)');
  print();
  if (r.skipped !== undefined) {
    print(`Skipped: ${r.skipped}.`);
  } else {
    const bare = r.perCall[BARE].median;
    // Each subject against cockatiel's counterpart: its retry, or its breaker.
    const cockatielFor = (name) =>
      r.perCall[name.includes('circuitBreaker') ? 'cockatiel 3 circuitBreaker().execute(op)' : (cockatielEquivalent[name] ?? 'cockatiel 3 retry().execute(op)')].median;
    table(
      ['subject', 'instructions per call', 'each run', '× bare', '× cockatiel (its counterpart)', 'bytes allocated per call'],
      Object.entries(r.perCall).map(([name, x]) => [
        name,
        x.median.toFixed(0),
        x.runs.map((v) => v.toFixed(0)).join(', '),
        times(x.median / bare),
        times(x.median / cockatielFor(name)),
        x.bytes.toFixed(0),
      ]),
    );
    print(
      `${r.valgrind} (cachegrind, no cache simulation), \`node --predictable\` with ${SEMI_SPACE_MIB} MiB semi-spaces (no helper threads, fixed seeds, and no GC during the run: the count is the calls' own work, the GC's share follows from the bytes allocated); per call = (instructions with ` +
        `${settings.instructionCalls[1].toLocaleString('en')} calls − with ${settings.instructionCalls[0].toLocaleString('en')}) ÷ the difference, ` +
        `after 20,000 warm-up calls; median of ${settings.instructionRepeats} run${settings.instructionRepeats > 1 ? 's' : ''}. ` +
        'Instructions are not time (a cache miss costs more than an add), but they are what a change to the code changes.',
    );
  }
  print();
  timings.instructions = performance.now() - started;
}

if (only.has('zero')) {
  const started = performance.now();
  const runs = await inProcesses('zero');
  const r = (results.zero = {
    timers: runs[0].timers,
    concurrency: runs[0].concurrency,
    sequential: pool(runs.map((x) => x.sequential)),
    concurrent: pool(runs.map((x) => x.concurrent)),
  });
  print('## 2. One 0 ms retry (first attempt fails, second succeeds)');
  print();
  table(
    ['subject', 'timers per call', 'sequential, per call', `${r.concurrency} concurrent, per call`],
    Object.keys(r.timers).map((name) => [name, String(r.timers[name]), mmm(r.sequential[name].ns), mmm(r.concurrent[name].ns)]),
  );
  timings.zero = performance.now() - started;
}

if (only.has('heap')) {
  const started = performance.now();
  const r = (results.heap = await benchHeap({ rounds: settings.heapRounds, calls: settings.heapCalls }));
  print(`## 3. Heap growth after ${settings.heapCalls.toLocaleString('en')} sequential successful calls (fresh process each, --expose-gc)`);
  print();
  table(
    ['subject', 'heap growth', 'each round', 'ns per call (this loop)'],
    Object.entries(r).map(([key, x]) => [heapLabels[key], mib(x.growth.median), x.rounds.map(mib).join(', '), mmm(x.nsPerCall)]),
  );
  timings.heap = performance.now() - started;
}

if (only.has('decisions')) {
  const started = performance.now();
  const runs = await inProcesses('decisions', settings.decisionRounds);
  const r = (results.decisions = { decisions: pool(runs.map((x) => x.decisions)), shells: pool(runs.map((x) => x.shells), BARE) });
  print('## 4. Budget and breaker decisions (synchronous, per operation)');
  print();
  table(
    ['operation', 'ns per op'],
    Object.entries(r.decisions).map(([name, x]) => [name, mmm(x.ns)]),
  );
  print('Breakers, async shell, one successful call:');
  print();
  table(
    ['subject', 'ns per call', '× bare', '× bare, fastest rounds'],
    Object.entries(r.shells).map(([name, x]) => [name, mmm(x.ns), mmm(x.ratio, times), times(x.ns.min / r.shells[BARE].ns.min)]),
  );
  timings.decisions = performance.now() - started;
}

if (only.has('overload')) {
  const started = performance.now();
  const runs = await inProcesses('overload', settings.decisionRounds);
  const time = { throttles: pool(runs.map((x) => x.throttles), THROTTLE_BASELINE), shedders: pool(runs.map((x) => x.shedders), SHEDDER_BASELINE) };
  const counted = await benchOverloadInstructions({ repeats: settings.instructionRepeats, calls: settings.instructionCalls });
  results.overload = { time, instructions: counted };
  print('## 8. Overload control: adaptive throttling per attempt, the load shedder per request (synchronous)');
  print();
  const rows = (group, baseline) =>
    Object.entries(group).map(([name, x]) => {
      const row = [name, mmm(x.ns), mmm(x.ratio, times)];
      if (counted.skipped === undefined) {
        const c = counted.perCall[name];
        row.push(c.median.toFixed(0), times(c.median / counted.perCall[baseline].median), c.bytes.toFixed(0));
      }
      return row;
    });
  const head = ['operation', 'ns per op', '× the first row (within each round)'];
  if (counted.skipped === undefined) head.push('instructions per op', '× the first row', 'bytes allocated per op');
  table(head, rows(time.throttles, THROTTLE_BASELINE));
  table(head, rows(time.shedders, SHEDDER_BASELINE));
  print(
    'Times as section 4 (the throttles\' clock advances 1 ms per operation; the shedders read the real clock). ' +
      'The first table against a retry budget\'s bookkeeping for one successful call, which a throttle replaces or joins; ' +
      'the second against the fixed in-flight limit. Event-loop monitoring is `maxEventLoopDelayMs` and `maxEventLoopUtilization` ' +
      'with thresholds never reached, so that every request reads the monitor and is admitted.' +
      (counted.skipped === undefined
        ? ` Instructions: ${counted.valgrind}, counted as section 1b (difference of ${settings.instructionCalls.map((n) => n.toLocaleString('en')).join(' and ')} operations after 20,000 warm-up, median of ${settings.instructionRepeats}).`
        : ` Instruction counts skipped: ${counted.skipped}.`),
  );
  print();
  timings.overload = performance.now() - started;
}

if (only.has('redis')) {
  const started = performance.now();
  const runs = await inProcesses('redis', settings.decisionRounds);
  print('## 6. herdless/redis: the success path with a budget shared through Redis');
  print();
  if (runs[0].skipped !== undefined) {
    print(`Skipped: ${runs[0].skipped}.`);
  } else {
    const r = (results.redis = { cases: pool(runs.map((x) => x.result), 'retry(op, { budget: retryThrottlingBudget() })'), runs });
    table(
      ['subject', 'ns per call', '× the local budget'],
      Object.entries(r.cases).map(([name, x]) => [name, mmm(x.ns), mmm(x.ratio, times)]),
    );
    const calls = runs.reduce((a, x) => a + x.calls, 0);
    const commands = runs.reduce((a, x) => a + x.commands, 0);
    print(
      `Redis received ${commands.toLocaleString('en')} script call${commands === 1 ? '' : 's'} (INFO commandstats: EVAL + EVALSHA) for ` +
        `${calls.toLocaleString('en')} successful calls through the shared budget — the batches of flushIntervalMs (100 ms), ` +
        `none per call; ${runs.reduce((a, x) => a + x.decisions, 0)} retry decisions. redis-server ${'on 127.0.0.1'}, started by the benchmark.`,
    );
  }
  print();
  timings.redis = performance.now() - started;
}

if (only.has('herd')) {
  const started = performance.now();
  const r = (results.herd = await benchHerdTable({ rounds: settings.herdRounds }));
  print('## 5. Simulator');
  print();
  print(`Full herd table (6 strategies × 20 seeds = 120 runs, ${(r[0].events / 1e6).toFixed(1)} M request events), as \`herdless-lab herd\` runs it:`);
  print();
  table(
    ['mode', 'wall time', 'M request events/s', `× faster than CPython (${CPYTHON_HERD_TABLE_S} s)`],
    r.map((x) => [
      x.workers === 0 ? 'one thread' : `${x.workers} worker threads`,
      mmm(x.ms, (v) => `${(v / 1000).toFixed(2)} s`),
      `${((x.events / x.ms.median) * 1e3 / 1e6).toFixed(0)}`,
      mmm({ median: (CPYTHON_HERD_TABLE_S * 1000) / x.ms.median, min: (CPYTHON_HERD_TABLE_S * 1000) / x.ms.max, max: (CPYTHON_HERD_TABLE_S * 1000) / x.ms.min }, (v) => `${v.toFixed(1)}×`),
    ]),
  );
  timings.herd = performance.now() - started;
}

if (only.has('scale')) {
  const started = performance.now();
  const r = (results.scale = await benchHerdScale({ rounds: settings.scaleRounds }));
  print('Herd with full jitter, seed 0, 120 s horizon, one process per run:');
  print();
  table(
    ['clients', 'request events', 'server crashes', 'finished', 'time', 'M events/s', 'ns per event', 'peak RSS', 'RSS before the run'],
    r.map((x) => [
      x.clients.toLocaleString('en'),
      x.requests.toLocaleString('en'),
      String(x.crashes),
      x.finished ? 'yes' : `no (${x.outstanding.toLocaleString('en')} outstanding)`,
      mmm(x.ms, (v) => (v < 1000 ? `${v.toFixed(0)} ms` : `${(v / 1000).toFixed(2)} s`)),
      (x.eventsPerS.median / 1e6).toFixed(1),
      x.nsPerEvent.median.toFixed(1),
      `${x.maxRssMiB.median.toFixed(0)} MiB`,
      `${x.baseRssMiB.median.toFixed(0)} MiB`,
    ]),
  );
  timings.scale = performance.now() - started;
}

if (only.has('adapters') || only.has('adapter-instructions')) {
  const started = performance.now();
  print('## 7. HTTP adapters: one successful GET on loopback, side by side with what users pick instead');
  print();
  let time;
  if (only.has('adapters')) {
    const runs = await inProcesses('adapters');
    time = results.adapters = pool(runs);
  }
  const instructions = only.has('adapter-instructions') ? (results.adapterInstructions = await benchAdapterInstructions(quick ? { warmup: 200, calls: [50, 150] } : {})) : undefined;
  const counted = instructions !== undefined && instructions.skipped === undefined;
  const ratio = (a, b) => spread(time[a].rounds.map((v, i) => v / time[b].rounds[i]));
  const rows = [];
  for (const [subject, peer] of adapterPairs) {
    for (const name of [peer, subject]) {
      const row = [name];
      if (time !== undefined) row.push(mmm(time[name].ns), name === subject ? mmm(ratio(subject, peer), times) : '');
      if (counted) row.push(instructions.perRequest[name].toFixed(0), name === subject ? times(instructions.perRequest[subject] / instructions.perRequest[peer]) : '');
      rows.push(row);
    }
  }
  const head = ['subject'];
  if (time !== undefined) head.push('client CPU per request', '× its peer (within each round)');
  if (counted) head.push('instructions per request', '× its peer');
  table(head, rows);
  if (time !== undefined) {
    print(
      `CPU time of the client process only (the server is a process of its own); each round runs every subject for ${adapterBatch(settings.minCpuMs)} sequential ` +
        'requests on a keep-alive connection, in an order rotated each round; median (min–max) over the rounds of all processes. The bare clients (no retry at all) for scale: ' +
        ['bare undici Agent', 'bare axios'].map((n) => `${n} ${mmm(time[n].ns)}`).join(', ') +
        '. On a shared, busy machine these vary from run to run by more than the differences measured; the instruction counts do not.',
    );
  }
  if (instructions?.skipped !== undefined) print(`Instruction counts skipped: ${instructions.skipped}.`);
  else if (counted) {
    print(
      `Instructions: valgrind cachegrind on the client process, (count with ${instructions.calls[1]} requests − with ${instructions.calls[0]}) ÷ ${instructions.calls[1] - instructions.calls[0]}, ` +
        `after ${instructions.warmup} warm-up requests; one run each. They include the client's own work (HTTP parsing, streams, the event loop), as a request does.`,
    );
  }
  print();
  timings.adapters = performance.now() - started;
}

print(
  `sections: ${Object.entries(timings).map(([k, ms]) => `${k} ${(ms / 1000).toFixed(0)} s`).join(', ')}; ` +
  `total ${((performance.now() - t0) / 1000).toFixed(0)} s; load average at end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
results.timings = timings;
writeFileSync(new URL('./last-run.json', import.meta.url), JSON.stringify(results, null, 2));
writeFileSync(new URL('./last-run.md', import.meta.url), out.join('\n') + '\n');

function defaultClockLabel() {
  return process.env.BENCH_CLOCK === 'cpu' ? 'process CPU-time' : 'wall';
}
