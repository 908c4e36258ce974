/** The lab page's HTML: the form and the result areas; `page.js` fills the choices and does the rest. */
export function pageHtml(): string {
  const field = (name: string, label: string, hint: string, value = '') => `
      <label class="field" data-input="${name}">
        <span class="label">${label} <small>${hint}</small></span>
        <input name="${name}" value="${value}" autocomplete="off" spellcheck="false">
        <span class="error" role="alert" data-error-for="${name}"></span>
      </label>`;
  const checks = (name: string, container: string, label: string, hint: string) => `
      <div class="field" data-input="${name}" role="group" aria-label="${label}">
        <span class="label">${label} <small>${hint}</small></span>
        <div id="${container}"></div>
        <span class="error" role="alert" data-error-for="${name}"></span>
      </div>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>herdless lab — try a retry policy</title>
<link rel="icon" href="data:,">
<style>
  body { font: 14px/1.45 system-ui, sans-serif; color: #222; margin: 0; background: #fafafa; }
  header { padding: 14px 24px; background: white; border-bottom: 1px solid #ddd; }
  header h1 { font-size: 20px; margin: 0; }
  header p { margin: 4px 0 0; color: #555; }
  .layout { display: grid; grid-template-columns: 300px 1fr; gap: 20px; padding: 20px 24px; align-items: start; }
  #settings { background: white; border: 1px solid #ddd; padding: 14px 16px; }
  fieldset { border: 0; padding: 0; margin: 0 0 10px; }
  legend { font-weight: 600; margin-bottom: 4px; }
  .field { display: block; margin: 0 0 8px; }
  .label { display: block; font-size: 13px; }
  .label small { color: #777; }
  input, select { width: 100%; box-sizing: border-box; font: inherit; padding: 3px 6px; }
  .invalid input, .invalid select { border: 1px solid #d62728; background: #fff5f5; }
  .error { display: block; color: #b00; font-size: 12px; min-height: 0; }
  .results { background: white; border: 1px solid #ddd; padding: 14px 18px; min-width: 0; }
  pre { font: 12.5px/1.45 ui-monospace, Menlo, Consolas, monospace; background: #f6f6f6; border: 1px solid #e4e4e4; padding: 8px 10px; overflow-x: auto; }
  code { font: 12.5px ui-monospace, Menlo, Consolas, monospace; background: #f2f2f2; padding: 1px 4px; }
  .status { display: flex; gap: 10px; align-items: center; color: #555; }
  progress { width: 220px; }
  .links a { margin-right: 12px; }
  .chart { overflow-x: auto; max-width: 100%; }
  button { font: inherit; padding: 4px 14px; }
  .buttons { display: flex; gap: 8px; }
  .check { display: flex; gap: 6px; align-items: baseline; }
  .check input { width: auto; }
  .stale #shown { opacity: 0.45; }
  .stale-note { background: #fff6d6; border: 1px solid #e6c200; padding: 4px 8px; }
  .note { color: #555; font-size: 13px; }
  @media (max-width: 760px) {
    .layout { grid-template-columns: 1fr; padding: 10px; gap: 10px; }
    header { padding: 10px; }
    .results { padding: 10px; }
  }
</style>
</head>
<body>
<header>
  <h1>herdless lab — try a retry policy</h1>
  <p>The simulation runs in your browser, in a Web Worker, on the herdless library's own code: the numbers are the CLI's.</p>
</header>
<div class="layout">
  <form id="settings" novalidate>
    <fieldset>
      <legend>Experiment</legend>
      <label class="field" data-input="experiment"><span class="label">preset</span><select name="experiment"></select></label>
    </fieldset>
    <fieldset data-group="herd">
      <legend>Policy</legend>
      <label class="field" data-input="strategy"><span class="label">strategy</span><select name="strategy"></select></label>
      <label class="field" data-input="kind"><span class="label">backoff kind <small>backoff.kind</small></span><select name="kind"></select>
        <span class="error" role="alert" data-error-for="kind"></span></label>
      <div id="params"></div>
      ${field('maxAttempts', 'max attempts', 'maxAttempts; empty = no cap')}
    </fieldset>
    <fieldset data-group="herd">
      <legend>Clients and server</legend>
      ${field('clients', 'clients', 'clients')}
      ${field('capacity', 'capacity per 10 ms tick', 'server.capacityPerTick')}
      ${field('crashLimit', 'crash limit per 100 ms', 'server.crashLimit')}
      ${field('spreadMs', 'first sends spread over', 'arrivals.spreadMs, ms')}
    </fieldset>
    <fieldset data-group="budget" hidden>
      <legend>Budget experiment: 10 clients, the downstream down</legend>
      <div class="field" data-input="budgetPolicies" role="group" aria-label="policies">
        <span class="label">policies <small>one table row each</small></span>
        <div id="budget-policies"></div>
        <span class="error" role="alert" data-error-for="budgetPolicies"></span>
      </div>
      ${field('outageStartS', 'outage from', 'seconds, 0–40')}
      ${field('outageEndS', 'outage until', 'seconds, at most 37')}
      ${field('ratePerSecond', 'new requests per second, per client', 'arrivals.ratePerSecond; 30 = about 300/s in all')}
    </fieldset>
    <fieldset data-group="layers" hidden>
      <legend>Layers experiment: a chain of services, the last always failing</legend>
      ${field('depth', 'depth', 'services in the chain, 1–10')}
      ${field('attempts', 'attempts per layer', 'maxAttempts of every caller, 1–10')}
      <p class="note">Both policies run: every layer retries, and retry at one layer only (the services below answer “overloaded; don’t retry”).</p>
    </fieldset>
    <fieldset data-group="herd budget">
      ${field('seeds', 'seeds', 'e.g. 0-19 or 1,5,9')}
    </fieldset>
    <fieldset data-group="hedging" hidden>
      <legend>Hedging: 10 replicas with a latency tail, Poisson load</legend>
      ${checks('hedgingPolicies', 'hedging-policies', 'clients', 'one line per load each')}
      ${field('loads', 'offered loads', '% of capacity, e.g. 10,50,90 (--loads)')}
      ${field('delayMs', 'hedge delay', 'ms, the fixed delay (--delay)')}
      ${field('percentile', 'percentile', 'the percentile clients’, and their name (p95 delay), 1–99.9 (--percentile)')}
      ${field('budgetRatio', 'budget ratio', 'retryRatioBudget: hedges per request, 0–1 (--budget-ratio)')}
      ${field('hedgeAttempts', 'attempts per call', 'the first included, 1–10 (--max-attempts)')}
      ${field('durationS', 'duration', 's of arrivals per run, 3–600 (--duration)')}
      ${field('hedgingSeeds', 'seeds', 'e.g. 0-2 or 1,5,9')}
    </fieldset>
    <fieldset data-group="contention" hidden>
      <legend>Contention: N clients update one row under optimistic concurrency</legend>
      ${checks('contentionStrategies', 'contention-strategies', 'strategies', 'one line each in the charts')}
      ${field('contentionClients', 'clients', 'counts, comma-separated, 1–1000 (--clients)')}
      ${field('contentionSeeds', 'seeds', 'run r draws from random.Random(r); e.g. 0-99')}
    </fieldset>
    <fieldset data-group="metastable" hidden>
      <legend>Metastable queue: 50 workers, clients that time out and retry</legend>
      <label class="field" data-input="metastableTable"><span class="label">combinations <small>client policy × server</small></span><select name="metastableTable"></select>
        <span class="error" role="alert" data-error-for="metastableTable"></span></label>
      <p class="note" id="metastable-report-note">The report’s table: every client policy (no retry, plain retries, each budget) against a FIFO server, then 3 plain retries against LIFO, dropping expired requests and shedding.</p>
      <div id="metastable-cross" hidden>
      ${checks('metastablePolicies', 'metastable-policies', 'client policies', 'each on every server checked')}
      ${checks('metastableServers', 'metastable-servers', 'servers', 'FIFO queue, or a protection')}
      </div>
      <label class="field" data-input="triggerKind"><span class="label">trigger <small>trigger.kind</small></span><select name="triggerKind"></select>
        <span class="error" role="alert" data-error-for="triggerKind"></span></label>
      ${field('triggerStartS', 'trigger from', 's (trigger.startMs ÷ 1000)')}
      ${field('triggerEndS', 'trigger until', 's; 3 s before the run’s end at most (trigger.endMs ÷ 1000)')}
      ${field('triggerFactor', 'trigger factor', 'capacity: speed, 0–1; spike: rate ×, ≥ 1 (trigger.factor)')}
      ${field('metastableRate', 'new requests per second', 'Poisson, open loop (ratePerSecond)')}
      ${field('timeoutS', 'client timeout', 's per attempt (timeoutMs ÷ 1000)')}
      ${field('metastableSeeds', 'seeds', 'e.g. 0-19 or 1,5,9')}
    </fieldset>
    <span class="error" role="alert" data-error-for="form"></span>
    <div class="buttons"><button type="submit" id="run">Run</button><button type="button" id="cancel" disabled>Cancel</button></div>
  </form>
  <section class="results" id="results" aria-live="polite">
    <div class="status"><progress id="progress" max="1" value="0"></progress><span id="status">starting…</span></div>
    <p id="stale-note" class="stale-note" hidden>These results are for earlier inputs: they update when the new run finishes.</p>
    <p id="no-results" class="note">The results of this experiment show here when its run finishes.</p>
    <div id="shown" hidden>
      <h2>Table</h2>
      <pre id="table"></pre>
      <p class="links" id="links"></p>
      <p>The same numbers from the command line: <code id="cli"></code></p>
      <div data-results="herd">
        <h2>Arrivals per 100 ms, first seed</h2>
        <div id="chart-arrivals" class="chart"></div>
        <h2>Each seed</h2>
        <div id="chart-seeds" class="chart"></div>
      </div>
      <div data-results="budget" hidden>
        <h2>Arrivals per second, first seed</h2>
        <div id="chart-per-second" class="chart"></div>
        <h2>One client’s tokens under gRPC retryThrottling, first seed</h2>
        <div id="chart-tokens" class="chart"></div>
      </div>
      <div data-results="layers" hidden>
        <h2>Calls reaching each service</h2>
        <div id="chart-layers" class="chart"></div>
      </div>
      <div data-results="hedging" hidden>
        <h2>Latency and attempts per call against offered load (means over the seeds)</h2>
        <div id="chart-hedging" class="chart"></div>
      </div>
      <div data-results="contention" hidden>
        <h2>Mean time and mean calls against the number of clients</h2>
        <div id="chart-contention" class="chart"></div>
      </div>
      <div data-results="metastable" hidden>
        <h2>Offered load, goodput and wasted work per second, seed <span id="metastable-seed"></span> (the trigger shaded, new requests dashed)</h2>
        <div id="chart-metastable" class="chart"></div>
        <h2>Queue length at the end of each second (symmetric-log scale)</h2>
        <div id="chart-queue" class="chart"></div>
      </div>
    </div>
  </section>
</div>
<script type="module" src="/page.js"></script>
</body>
</html>
`;
}
