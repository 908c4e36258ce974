// The lab page: a form, a Web Worker running the library's engine, and the report's own charts.
import { BACKOFF_KINDS, BUDGET_POLICIES, CONTENTION_STRATEGIES, HEDGING_LOADS, HEDGING_POLICIES, HEDGING_SETTINGS, HERD_STRATEGIES, METASTABLE_POLICIES, METASTABLE_SERVERS, herdRow, type HerdStrategy } from 'herdless/sim';
import { parse, View } from 'vega';
import { expressionInterpreter } from 'vega-interpreter';
import { compile, type TopLevelSpec } from 'vega-lite';
import { rowsToCsv, seedRows } from '../charts/series.js';
import { hedgingSpec } from '../charts/hedging.js';
import { arrivalsSpec, contentionSpec, layersSpec, metastableSpec, perSecondSpec, perSeedSpec, queueSpec, tokensSpec } from '../charts/specs.js';
import { budgetCsv, budgetJson, budgetTable, budgetTitle, type BudgetResult } from '../experiments/budget.js';
import { describeRun, herdCsv, herdJson, herdTable, seedText, type HerdResult, type HerdRun } from '../experiments/herd.js';
import { CONTENTION_DEFAULTS, contentionCsv, contentionJson, contentionPoints, contentionTable, contentionTitle, type ContentionResult, type ContentionSettings } from '../experiments/contention.js';
import { DEFAULT_HEDGING_RUN, hedgingCsv, hedgingJson, hedgingLabels, hedgingPoints, hedgingTable, hedgingTitle, type HedgingResult, type HedgingRun } from '../experiments/hedging.js';
import { layersCsv, layersJson, layersTable, layersTitle } from '../experiments/layers.js';
import { combinationName, metastableCsv, metastableFigurePoints, metastableJson, metastableTable, metastableTitle, type MetastableResult, type MetastableSettings } from '../experiments/metastable.js';
import {
  defaultForm,
  experimentKind,
  kindDefaults,
  PAGE_EXPERIMENTS,
  strategyFields,
  triggerFactorDefault,
  validatePage,
  type BudgetPageRun,
  type FormError,
  type FormValues,
  type LayersPageRun,
  type PageExperiment,
  type PageFormResult,
} from './form.js';
import type { BudgetDone, ContentionDone, DoneMessage, HedgingDone, HerdDone, LayersDone, MetastableDone, RunRequest, WorkerMessage } from './protocol.js';

const $ = <T extends Element>(selector: string): T => {
  const el = document.querySelector<T>(selector);
  if (!el) throw new Error(`lab page: no ${selector}`);
  return el;
};

const form = $<HTMLFormElement>('#settings');
const input = (name: string): HTMLInputElement | HTMLSelectElement => form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement;
const status = $<HTMLElement>('#status');
const progress = $<HTMLProgressElement>('#progress');
const results = $<HTMLElement>('#results');
const cancelButton = $<HTMLButtonElement>('#cancel');

function options(select: HTMLSelectElement, items: readonly { value: string; label: string }[]): void {
  select.replaceChildren(...items.map(({ value, label }) => new Option(label, value)));
}

options(input('experiment') as HTMLSelectElement, PAGE_EXPERIMENTS.map((x) => ({ value: x.id, label: x.title })));
options(input('strategy') as HTMLSelectElement, [...HERD_STRATEGIES.map((s) => ({ value: s, label: s })), { value: 'custom', label: 'custom (edit the backoff below)' }]);
options(input('kind') as HTMLSelectElement, BACKOFF_KINDS.map((k) => ({ value: k, label: k })));
options(input('metastableTable') as HTMLSelectElement, [
  { value: 'report', label: 'the report’s table' },
  { value: 'cross', label: 'each policy checked on each server checked' },
]);
options(input('triggerKind') as HTMLSelectElement, [
  { value: 'capacity', label: 'capacity: the server slowed down' },
  { value: 'spike', label: 'spike: more new requests' },
]);

/** The page's groups of checkboxes: the form value each fills, its container, and its choices. */
const CHECK_GROUPS = [
  ['budgetPolicies', '#budget-policies', BUDGET_POLICIES],
  ['hedgingPolicies', '#hedging-policies', HEDGING_POLICIES],
  ['contentionStrategies', '#contention-strategies', CONTENTION_STRATEGIES],
  ['metastablePolicies', '#metastable-policies', METASTABLE_POLICIES.map((p) => p.name)],
  ['metastableServers', '#metastable-servers', Object.keys(METASTABLE_SERVERS)],
] as const;

for (const [name, container, choices] of CHECK_GROUPS) {
  $<HTMLElement>(container).replaceChildren(
    ...choices.map((choice) => {
      const label = document.createElement('label');
      label.className = 'check';
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.name = name;
      box.value = choice;
      label.append(box, ` ${choice}`);
      return label;
    }),
  );
}

const checkedValues = (name: string): string[] => [...form.querySelectorAll<HTMLInputElement>(`input[name=${name}]:checked`)].map((b) => b.value);

/** Shows the backoff options of the form's kind as inputs. */
function renderParams(values: FormValues): void {
  const box = $<HTMLElement>('#params');
  box.replaceChildren(
    ...Object.keys(values.params).map((name) => {
      const label = document.createElement('label');
      label.className = 'field';
      label.dataset.input = `param:${name}`;
      label.innerHTML = '<span class="label"></span><input autocomplete="off" spellcheck="false"><span class="error" role="alert"></span>';
      label.querySelector('.label')!.textContent = `${name} `;
      const hint = document.createElement('small');
      hint.textContent = `backoff.${name}`;
      label.querySelector('.label')!.append(hint);
      const el = label.querySelector('input')!;
      el.name = `param:${name}`;
      el.value = values.params[name]!;
      label.querySelector('.error')!.setAttribute('data-error-for', `param:${name}`);
      return label;
    }),
  );
}

const TEXT_INPUTS = [
  'experiment',
  'strategy',
  'kind',
  'maxAttempts',
  'clients',
  'capacity',
  'crashLimit',
  'spreadMs',
  'seeds',
  'outageStartS',
  'outageEndS',
  'ratePerSecond',
  'depth',
  'attempts',
  'loads',
  'hedgeAttempts',
  'delayMs',
  'percentile',
  'budgetRatio',
  'durationS',
  'hedgingSeeds',
  'contentionClients',
  'contentionSeeds',
  'metastableTable',
  'triggerKind',
  'triggerStartS',
  'triggerEndS',
  'triggerFactor',
  'metastableRate',
  'timeoutS',
  'metastableSeeds',
] as const;

/** Shows the inputs of the chosen experiment only (and the metastable checkboxes only for a cross of them). */
function showGroups(experiment: string): void {
  const kind = experimentKind(experiment);
  for (const el of form.querySelectorAll<HTMLElement>('[data-group]')) el.hidden = !el.dataset.group!.split(' ').includes(kind);
  const cross = input('metastableTable').value === 'cross';
  $<HTMLElement>('#metastable-cross').hidden = !cross;
  $<HTMLElement>('#metastable-report-note').hidden = cross;
}

function writeForm(values: FormValues): void {
  for (const key of TEXT_INPUTS) input(key).value = values[key];
  for (const [name] of CHECK_GROUPS) for (const box of form.querySelectorAll<HTMLInputElement>(`input[name=${name}]`)) box.checked = values[name].includes(box.value);
  renderParams(values);
  showGroups(values.experiment);
}

function readForm(): FormValues {
  const params: Record<string, string> = {};
  for (const el of form.querySelectorAll<HTMLInputElement>('#params input')) params[el.name.slice('param:'.length)] = el.value;
  const text = Object.fromEntries(TEXT_INPUTS.map((name) => [name, input(name).value])) as Record<(typeof TEXT_INPUTS)[number], string>;
  const boxes = Object.fromEntries(CHECK_GROUPS.map(([name]) => [name, checkedValues(name)])) as Record<(typeof CHECK_GROUPS)[number][0], string[]>;
  return { ...text, ...boxes, params };
}

/** Puts the message beside its input and highlights that input (`.invalid`, `aria-invalid`). */
function showError(error: FormError | null): void {
  for (const el of form.querySelectorAll('[data-error-for]')) el.textContent = '';
  for (const el of form.querySelectorAll('.invalid')) el.classList.remove('invalid');
  for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  if (!error) return;
  const slot = form.querySelector(`[data-error-for="${CSS.escape(error.input)}"]`) ?? form.querySelector('[data-error-for="form"]')!;
  slot.textContent = error.message;
  const field = form.querySelector(`[data-input="${CSS.escape(error.input)}"]`);
  field?.classList.add('invalid');
  for (const el of field?.querySelectorAll('input, select') ?? []) el.setAttribute('aria-invalid', 'true');
}

/** The CLI command that prints the same herd table. */
function herdCommand(values: FormValues, run: HerdRun): string {
  const viaConfig = `npm run lab -- herd --config scenario.json --seeds ${seedText(run.seeds)}`;
  // A custom backoff is no herd preset: only the scenario file reproduces it.
  if (!(HERD_STRATEGIES as readonly string[]).includes(values.strategy)) return viaConfig;
  const preset = defaultForm(values.strategy as HerdStrategy);
  const strategy = strategyFields(values.strategy as HerdStrategy);
  const standard =
    values.kind === strategy.kind &&
    JSON.stringify(Object.entries(values.params).map(([k, v]) => [k, Number(v)])) === JSON.stringify(Object.entries(strategy.params).map(([k, v]) => [k, Number(v)])) &&
    values.maxAttempts.trim() === '' &&
    Number(values.clients) === Number(preset.clients) &&
    Number(values.capacity) === Number(preset.capacity) &&
    Number(values.crashLimit) === Number(preset.crashLimit) &&
    (Number(values.spreadMs) === 0 || Number(values.spreadMs) === 900);
  if (!standard) return viaConfig;
  const spread = Number(values.spreadMs) === 900 ? ' --spread 0.9' : '';
  return `npm run lab -- herd${spread} --strategies "${values.strategy}" --seeds ${seedText(run.seeds)}`;
}

/** The CLI command that prints the same budget table: the article's set-up with flags, anything else through the scenario file. */
function budgetCommand(run: BudgetPageRun): string {
  const seeds = seedText(run.seeds);
  const article = defaultForm();
  if (run.outage.startMs !== 5000 || run.outage.endMs !== 15_000 || run.ratePerSecond !== Number(article.ratePerSecond)) {
    return `npm run lab -- budget --config scenario.json --seeds ${seeds}`;
  }
  const all = run.policies.length === BUDGET_POLICIES.length;
  return `npm run lab -- budget${all ? '' : ` --policies "${run.policies.map((p) => p.name).join(',')}"`} --seeds ${seeds}`;
}

const views = new Map<string, View>();

/**
 * Renders a spec into a container with Vega's SVG renderer and its CSP-safe expression interpreter,
 * unless run `id` is no longer the latest: a run that finished while a newer one started must not
 * draw over the newer run's charts when its own drawing resumes after an await.
 */
async function draw(id: number, selector: string, spec: TopLevelSpec): Promise<void> {
  if (id !== runId) return;
  views.get(selector)?.finalize();
  const view = new View(parse(compile(spec).spec, undefined, { ast: true }), { renderer: 'svg', container: selector, hover: true, expr: expressionInterpreter });
  views.set(selector, view);
  await view.runAsync();
}

/** The plot width that fits a chart container: its width less the axes (charts stay readable from 360 px). */
function plotWidth(selector: string, max: number): number {
  return Math.max(220, Math.min(max, $<HTMLElement>(selector).clientWidth - 90));
}

function dataLink(text: string, type: string, file: string, label: string): HTMLAnchorElement {
  const a = document.createElement('a');
  a.href = `data:${type};charset=utf-8,${encodeURIComponent(text)}`;
  a.download = file;
  a.id = `download-${file.replace(/\W/g, '-')}`;
  a.textContent = label;
  return a;
}

let worker: Worker | null = null;
let busy = false;
let runId = 0;
/** What the current run is doing, for the status line of a cancel. */
let lastProgress = '';

function setState(state: 'running' | 'done' | 'invalid' | 'failed' | 'cancelled'): void {
  document.body.dataset.state = state;
  cancelButton.disabled = state !== 'running';
}

/**
 * Shows the results only under the form of their own experiment — another experiment's table and
 * charts, greyed or not, would read as this one's — and marks them as coming from older inputs
 * (until a run of the new ones finishes).
 */
function markStale(stale: boolean): void {
  const kind = document.body.dataset.experiment; // the experiment of the results on the page
  const shown = kind !== undefined && kind === experimentKind(input('experiment').value);
  $<HTMLElement>('#shown').hidden = !shown;
  $<HTMLElement>('#no-results').hidden = shown;
  const on = stale && shown;
  results.classList.toggle('stale', on);
  $<HTMLElement>('#stale-note').hidden = !on;
  document.body.dataset.stale = String(on);
}

const table = $<HTMLElement>('#table');

/**
 * Fits the table's widest line in the panel by shrinking its (monospace) font, down to 10 px: a
 * table cut at the panel's edge hides its last column. Below that (a phone) it scrolls sideways.
 */
function fitTable(): void {
  table.style.fontSize = '';
  if (table.offsetParent === null || table.scrollWidth <= table.clientWidth) return;
  const style = getComputedStyle(table); // the page's own size, 12.5 px
  const padding = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
  // Monospace text is as wide as its font is large: scale by the room over the text's width.
  let px = Math.floor(parseFloat(style.fontSize) * ((table.clientWidth - padding) / (table.scrollWidth - padding)) * 10) / 10;
  table.style.fontSize = `${Math.max(10, px)}px`;
  // Rounding in the font's metrics may leave a pixel over.
  while (table.scrollWidth > table.clientWidth && px > 10) {
    px = Math.max(10, px - 0.2);
    table.style.fontSize = `${px}px`;
  }
}
window.addEventListener('resize', fitTable);

function stopWorker(): void {
  worker?.terminate();
  worker = null;
  busy = false;
}

function start(): void {
  const values = readForm();
  const checked = validatePage(values);
  if (!checked.ok) {
    showError(checked.error);
    status.textContent = `fix the highlighted field to run: ${checked.error.message}`;
    setState('invalid');
    return;
  }
  showError(null);
  if (busy) stopWorker(); // a newer request wins; the old run is dropped
  worker ??= new Worker('/sim-worker.js', { type: 'module' });
  const id = ++runId;
  const started = performance.now();
  busy = true;
  document.body.dataset.runId = String(id);
  setState('running');
  progress.value = 0;
  document.body.dataset.progress = '0';
  status.textContent = 'running…';
  lastProgress = '';
  worker.onmessage = (event: MessageEvent<WorkerMessage>) => {
    const msg = event.data;
    if (msg.id !== id) return;
    if (msg.type === 'progress') {
      const share = (msg.done + msg.fraction) / msg.total;
      progress.value = share;
      document.body.dataset.progress = share.toFixed(3);
      lastProgress = msg.step ?? `run ${msg.done + 1} of ${msg.total} (${msg.policy}, seed ${msg.seed})`;
      status.textContent = msg.step === undefined ? `running ${lastProgress}: ${Math.round(msg.fraction * 100)}% of its simulated time` : `running ${lastProgress}`;
    } else if (msg.type === 'error') {
      busy = false;
      status.textContent = `the run failed: ${msg.message}`;
      setState('failed');
    } else {
      busy = false;
      void show(values, checked, msg, performance.now() - started, id);
    }
  };
  worker.postMessage(request(id, checked));
}

function request(id: number, checked: Extract<PageFormResult, { ok: true }>): RunRequest {
  if (checked.kind === 'herd') return { type: 'run', id, experiment: 'herd', run: checked.run };
  if (checked.kind === 'budget') return { type: 'run', id, experiment: 'budget', run: checked.run };
  if (checked.kind === 'hedging') return { type: 'run', id, experiment: 'hedging', run: checked.run };
  if (checked.kind === 'contention') return { type: 'run', id, experiment: 'contention', run: checked.run };
  if (checked.kind === 'metastable') return { type: 'run', id, experiment: 'metastable', run: checked.run };
  return { type: 'run', id, experiment: 'layers', run: checked.run };
}

function cancel(): void {
  if (!busy) return;
  stopWorker();
  runId++; // late messages of the cancelled run are ignored
  status.textContent = `cancelled at ${lastProgress || 'the start'}; change an input or press Run to start again`;
  setState('cancelled');
}

/** Shows only the result charts of `kind`. */
function showResults(kind: PageExperiment): void {
  for (const el of document.querySelectorAll<HTMLElement>('[data-results]')) el.hidden = el.dataset.results !== kind;
}

async function showHerd(values: FormValues, run: HerdRun, scenario: object, msg: HerdDone, id: number): Promise<number> {
  const { runs, bins } = msg;
  const result: HerdResult = { run, rows: runs.map((r) => herdRow(r.policy, r.results)), runs };
  $<HTMLElement>('#table').textContent = `${describeRun(run)}\n${herdTable(result)}`;
  $<HTMLElement>('#cli').textContent = herdCommand(values, run);
  $<HTMLElement>('#links').replaceChildren(
    dataLink(JSON.stringify(herdJson(result, true)), 'application/json', 'herd.json', 'JSON (as --format json --per-seed)'),
    dataLink(`${herdCsv(result, true)}\n`, 'text/csv', 'herd.csv', 'CSV'),
    dataLink(`${JSON.stringify(scenario, null, 2)}\n`, 'application/json', 'scenario.json', 'scenario.json (for --config)'),
  );
  showResults('herd');
  const server = run.base.server;
  const end = Math.max(1, ...bins.map((b) => b.t2));
  await draw(
    id,
    '#chart-arrivals',
    arrivalsSpec(bins, [{ series: run.policies[0]!.name, title: `${run.policies[0]!.name}, seed ${run.seeds[0]}` }], {
      capacity: (server.capacityPerTick * 100) / server.tickMs,
      binMs: 100,
      windowS: Math.ceil(end),
      height: 200,
      width: plotWidth('#chart-arrivals', 720),
    }),
  );
  await draw(id, '#chart-seeds', perSeedSpec(seedRows(result), { width: plotWidth('#chart-seeds', 1000) + 90 }));
  return runs.reduce((n, r) => n + r.results.length, 0);
}

async function showBudget(values: FormValues, run: BudgetPageRun, scenario: object, msg: BudgetDone, id: number): Promise<number> {
  const result: BudgetResult = { run: { policies: [], seeds: run.seeds }, rows: msg.rows };
  const a = run.outage;
  const article = a.startMs === 5000 && a.endMs === 15_000 && run.ratePerSecond === 30;
  const title = article
    ? budgetTitle(seedText(run.seeds))
    : `# budget: 10 clients, ${run.ratePerSecond} new requests/s each, the downstream down from ${a.startMs / 1000} s to ${a.endMs / 1000} s, seeds ${seedText(run.seeds)}`;
  $<HTMLElement>('#table').textContent = `${title}\n${budgetTable(result)}`;
  $<HTMLElement>('#cli').textContent = budgetCommand(run);
  $<HTMLElement>('#links').replaceChildren(
    dataLink(JSON.stringify(budgetJson(result)), 'application/json', 'budget.json', 'JSON (as --format json)'),
    dataLink(`${budgetCsv(result)}\n`, 'text/csv', 'budget.csv', 'CSV'),
    dataLink(`${JSON.stringify(scenario, null, 2)}\n`, 'application/json', 'scenario.json', 'scenario.json (for budget --config)'),
  );
  showResults('budget');
  const outage = { startS: a.startMs / 1000, endS: a.endMs / 1000 };
  const server = run.base.server;
  const crashPerSecond = (server.crashLimit * 1000) / (server.crashWindowTicks * server.tickMs);
  await draw(id, '#chart-per-second', perSecondSpec(msg.perSecond, run.policies.map((p) => p.name), { outage, crashPerSecond, width: plotWidth('#chart-per-second', 680) }));
  await draw(id, '#chart-tokens', tokensSpec(msg.tokens, { outage, maxTokens: 10, width: plotWidth('#chart-tokens', 720) }));
  return run.policies.length * run.seeds.length;
}

async function showLayers(run: LayersPageRun, msg: LayersDone, id: number): Promise<number> {
  $<HTMLElement>('#table').textContent = `${layersTitle(run.depth, run.attempts)}\n${layersTable(msg.rows)}`;
  $<HTMLElement>('#cli').textContent = `npm run lab -- layers --depth ${run.depth} --attempts ${run.attempts}`;
  $<HTMLElement>('#links').replaceChildren(
    dataLink(JSON.stringify(layersJson(msg.rows)), 'application/json', 'layers.json', 'JSON (as --format json)'),
    dataLink(`${layersCsv(msg.rows)}\n`, 'text/csv', 'layers.csv', 'CSV'),
  );
  showResults('layers');
  // Both policies, as the table lists them: the chart is their comparison.
  const bars = msg.rows.flatMap((row) => Object.entries(row.calls).map(([service, calls]) => ({ policy: row.policy, service, calls })));
  await draw(id, '#chart-layers', layersSpec(bars, { width: plotWidth('#chart-layers', 480) }));
  return 2;
}

/** The CLI command that prints the same hedging table: the flags that differ from the defaults. */
function hedgingCommand(run: HedgingRun): string {
  const flags = [`--seeds ${seedText(run.seeds)}`];
  const same = (a: readonly unknown[], b: readonly unknown[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
  if (!same(run.loads, HEDGING_LOADS)) flags.push(`--loads ${run.loads.map((l) => Math.round(l * 1e6) / 1e4).join(',')}`);
  if (!same(run.policies, HEDGING_POLICIES)) flags.push(`--policies "${hedgingLabels(run).join(',')}"`);
  const t = run.settings;
  const d = HEDGING_SETTINGS;
  if (t.maxAttempts !== d.maxAttempts) flags.push(`--max-attempts ${t.maxAttempts}`);
  if (t.delayMs !== d.delayMs) flags.push(`--delay ${t.delayMs}`);
  if (t.percentile !== d.percentile) flags.push(`--percentile ${t.percentile}`);
  if (t.budgetRatio !== d.budgetRatio) flags.push(`--budget-ratio ${t.budgetRatio}`);
  if (run.durationMs !== DEFAULT_HEDGING_RUN.durationMs) flags.push(`--duration ${run.durationMs / 1000}`);
  return `npm run lab -- hedging ${flags.join(' ')}`;
}

async function showHedging(run: HedgingRun, msg: HedgingDone, id: number): Promise<number> {
  const result: HedgingResult = { run, rows: msg.rows };
  $<HTMLElement>('#table').textContent = `${hedgingTitle(run, seedText(run.seeds))}\n${hedgingTable(result)}`;
  $<HTMLElement>('#cli').textContent = hedgingCommand(run);
  $<HTMLElement>('#links').replaceChildren(
    dataLink(JSON.stringify(hedgingJson(result)), 'application/json', 'hedging.json', 'JSON (as --format json)'),
    dataLink(`${hedgingCsv(result)}\n`, 'text/csv', 'hedging.csv', 'CSV'),
    dataLink(`${rowsToCsv(hedgingPoints(result))}\n`, 'text/csv', 'hedging-figure.csv', 'figure data (as --figure-data)'),
  );
  showResults('hedging');
  await draw(id, '#chart-hedging', hedgingSpec(hedgingPoints(result), hedgingLabels(run), { width: plotWidth('#chart-hedging', 640) }));
  return msg.rows.length * run.seeds.length;
}

/** The CLI command that prints the same contention table. */
function contentionCommand(run: ContentionSettings): string {
  const flags = [`--seeds ${seedText(run.seeds)}`];
  if (run.clients.join() !== CONTENTION_DEFAULTS.clients.join()) flags.push(`--clients ${run.clients.join(',')}`);
  if (run.strategies.join() !== CONTENTION_STRATEGIES.join()) flags.push(`--strategies "${run.strategies.join(',')}"`);
  return `npm run lab -- contention ${flags.join(' ')}`;
}

async function showContention(run: ContentionSettings, msg: ContentionDone, id: number): Promise<number> {
  const result: ContentionResult = { settings: run, rows: msg.rows };
  $<HTMLElement>('#table').textContent = `${contentionTitle(run.seeds)}\n${contentionTable(result)}`;
  $<HTMLElement>('#cli').textContent = contentionCommand(run);
  $<HTMLElement>('#links').replaceChildren(
    dataLink(JSON.stringify(contentionJson(result)), 'application/json', 'contention.json', 'JSON (as --format json)'),
    dataLink(`${contentionCsv(result)}\n`, 'text/csv', 'contention.csv', 'CSV'),
  );
  showResults('contention');
  await draw(id, '#chart-contention', contentionSpec(contentionPoints(result), run.strategies, { width: plotWidth('#chart-contention', 900) }));
  return msg.rows.length * run.seeds.length;
}

/** The CLI command that prints the same metastable table: flags for the default setup (or spike), the scenario file otherwise. */
function metastableCommand(run: MetastableSettings, viaFlags: boolean, report: boolean): string {
  const seeds = seedText(run.seeds);
  if (!viaFlags) return `npm run lab -- metastable --config scenario.json --seeds ${seeds}`;
  if (report) return `npm run lab -- metastable${run.setup.trigger.kind === 'spike' ? ' --trigger spike' : ''} --seeds ${seeds}`;
  const policies = [...new Set(run.combinations.map((c) => c.policy.name))];
  const servers = [...new Set(run.combinations.map((c) => c.server))];
  const all = policies.length === METASTABLE_POLICIES.length;
  const trigger = run.setup.trigger.kind === 'spike' ? ' --trigger spike' : '';
  return `npm run lab -- metastable${all ? '' : ` --policies "${policies.join(',')}"`} --servers "${servers.join(',')}"${trigger} --seeds ${seeds}`;
}

async function showMetastable(run: MetastableSettings, scenario: object | null, viaFlags: boolean, msg: MetastableDone, id: number): Promise<number> {
  const result: MetastableResult = { settings: run, rows: msg.rows };
  $<HTMLElement>('#table').textContent = `${metastableTitle(run)}\n${metastableTable(result)}`;
  $<HTMLElement>('#cli').textContent = metastableCommand(run, viaFlags, scenario === null);
  $<HTMLElement>('#links').replaceChildren(
    dataLink(JSON.stringify(metastableJson(result)), 'application/json', 'metastable.json', 'JSON (as --format json)'),
    dataLink(`${metastableCsv(result)}\n`, 'text/csv', 'metastable.csv', 'CSV'),
    dataLink(`${rowsToCsv(msg.trace)}\n`, 'text/csv', 'metastable-trace.csv', `figure data: seed ${run.seeds[0]} per second (as --trace ${run.seeds[0]})`),
    // The report's table is no cross of policies and servers: no scenario file says it.
    ...(scenario === null ? [] : [dataLink(`${JSON.stringify(scenario, null, 2)}\n`, 'application/json', 'scenario.json', 'scenario.json (for metastable --config)')]),
  );
  showResults('metastable');
  const t = run.setup.trigger;
  const trigger = { startS: t.startMs / 1000, endS: t.endMs / 1000 };
  const combinations = run.combinations.map((c) => combinationName({ policy: c.policy.name, server: c.server }));
  const points = metastableFigurePoints(msg.trace);
  $<HTMLElement>('#metastable-seed').textContent = String(run.seeds[0]);
  await draw(id, '#chart-metastable', metastableSpec(points.seconds, combinations, { trigger, width: plotWidth('#chart-metastable', 680) }));
  await draw(id, '#chart-queue', queueSpec(points.queue, combinations, { trigger, width: plotWidth('#chart-queue', 560) }));
  return msg.rows.length * run.seeds.length;
}

async function show(values: FormValues, checked: Extract<PageFormResult, { ok: true }>, msg: DoneMessage, ms: number, id: number): Promise<void> {
  // The results area now holds this experiment's results: shown before the charts are drawn, which
  // take their width from it.
  document.body.dataset.experiment = checked.kind;
  markStale(true);
  let runs: number;
  if (checked.kind === 'herd' && msg.experiment === 'herd') runs = await showHerd(values, checked.run, checked.scenario, msg, id);
  else if (checked.kind === 'budget' && msg.experiment === 'budget') runs = await showBudget(values, checked.run, checked.scenario, msg, id);
  else if (checked.kind === 'layers' && msg.experiment === 'layers') runs = await showLayers(checked.run, msg, id);
  else if (checked.kind === 'hedging' && msg.experiment === 'hedging') runs = await showHedging(checked.run, msg, id);
  else if (checked.kind === 'contention' && msg.experiment === 'contention') runs = await showContention(checked.run, msg, id);
  else if (checked.kind === 'metastable' && msg.experiment === 'metastable') runs = await showMetastable(checked.run, checked.scenario, checked.viaFlags, msg, id);
  else throw new Error(`lab page: a ${msg.experiment} result for a ${checked.kind} run`);
  if (id !== runId) return;
  progress.value = 1;
  document.body.dataset.progress = '1';
  document.body.dataset.doneId = String(id);
  markStale(false);
  fitTable();
  status.textContent = checked.kind === 'layers' ? 'done: both policies' : `done: ${runs} runs in ${(ms / 1000).toFixed(1)} s`;
  setState('done');
}

let timer: ReturnType<typeof setTimeout> | undefined;
function schedule(): void {
  clearTimeout(timer);
  timer = setTimeout(start, 250);
}

form.addEventListener('change', (event) => {
  const target = event.target as HTMLInputElement | HTMLSelectElement;
  const values = readForm();
  if (target.name === 'strategy' && values.strategy !== 'custom') {
    writeForm({ ...values, ...strategyFields(values.strategy as HerdStrategy) });
  } else if (target.name === 'kind') {
    const params = Object.fromEntries(Object.entries(kindDefaults(values.kind as (typeof BACKOFF_KINDS)[number])).map(([k, v]) => [k, String(v)]));
    writeForm({ ...values, strategy: 'custom', params });
  } else if (target.name === 'experiment') {
    const preset = PAGE_EXPERIMENTS.find((x) => x.id === values.experiment);
    if (preset && 'spreadMs' in preset) input('spreadMs').value = String(preset.spreadMs);
    showGroups(values.experiment);
  } else if (target.name === 'metastableTable') {
    showGroups(values.experiment);
  } else if (target.name === 'triggerKind') {
    // A capacity trigger's factor (0–1) is no spike's (≥ 1): the kind brings its own default.
    input('triggerFactor').value = triggerFactorDefault(values.triggerKind);
  }
  markStale(true);
  schedule();
});
form.addEventListener('input', (event) => {
  const name = (event.target as HTMLInputElement).name;
  // Editing the backoff makes it a policy of one's own (the table then names it "custom …").
  if (name.startsWith('param:') || name === 'maxAttempts') input('strategy').value = 'custom';
  markStale(true);
  schedule();
});
form.addEventListener('submit', (event) => {
  event.preventDefault();
  clearTimeout(timer);
  start();
});
cancelButton.addEventListener('click', () => {
  clearTimeout(timer);
  cancel();
});

writeForm(defaultForm());
start();
