/** The lab page's HTML: the form and the result areas; `page.js` fills the choices and does the rest. */
export function pageHtml(): string {
  const field = (name: string, label: string, hint: string, value = '') => `
      <label class="field" data-input="${name}">
        <span class="label">${label} <small>${hint}</small></span>
        <input name="${name}" value="${value}" autocomplete="off" spellcheck="false">
        <span class="error" role="alert" data-error-for="${name}"></span>
      </label>`;
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
  #chart-arrivals, #chart-seeds { overflow-x: auto; max-width: 100%; }
  button { font: inherit; padding: 4px 14px; }
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
    <fieldset>
      <legend>Policy</legend>
      <label class="field" data-input="strategy"><span class="label">strategy</span><select name="strategy"></select></label>
      <label class="field" data-input="kind"><span class="label">backoff kind <small>backoff.kind</small></span><select name="kind"></select>
        <span class="error" role="alert" data-error-for="kind"></span></label>
      <div id="params"></div>
      ${field('maxAttempts', 'max attempts', 'maxAttempts; empty = no cap')}
    </fieldset>
    <fieldset>
      <legend>Clients and server</legend>
      ${field('clients', 'clients', 'clients')}
      ${field('capacity', 'capacity per 10 ms tick', 'server.capacityPerTick')}
      ${field('crashLimit', 'crash limit per 100 ms', 'server.crashLimit')}
      ${field('spreadMs', 'first sends spread over', 'arrivals.spreadMs, ms')}
      ${field('seeds', 'seeds', 'e.g. 0-19 or 1,5,9')}
    </fieldset>
    <span class="error" role="alert" data-error-for="form"></span>
    <button type="submit" id="run">Run</button>
  </form>
  <section class="results" aria-live="polite">
    <div class="status"><progress id="progress" max="1" value="0"></progress><span id="status">starting…</span></div>
    <h2>Table</h2>
    <pre id="table"></pre>
    <p class="links" id="links"></p>
    <p>The same numbers from the command line: <code id="cli"></code></p>
    <h2>Arrivals per 100 ms, first seed</h2>
    <div id="chart-arrivals"></div>
    <h2>Each seed</h2>
    <div id="chart-seeds"></div>
  </section>
</div>
<script type="module" src="/page.js"></script>
</body>
</html>
`;
}
