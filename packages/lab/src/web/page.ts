// The lab page: a form, a Web Worker running the library's engine, and the report's own charts.
import { BACKOFF_KINDS } from 'herdless/sim';
import { HERD_STRATEGIES, herdRow, type HerdStrategy } from 'herdless/sim';
import { parse, View } from 'vega';
import { expressionInterpreter } from 'vega-interpreter';
import { compile, type TopLevelSpec } from 'vega-lite';
import { seedRows } from '../charts/series.js';
import { arrivalsSpec, perSeedSpec } from '../charts/specs.js';
import { describeRun, herdCsv, herdJson, herdTable, seedText, type HerdResult, type HerdRun } from '../experiments/herd.js';
import { defaultForm, kindDefaults, PAGE_EXPERIMENTS, strategyFields, validateForm, type FormError, type FormValues } from './form.js';
import type { RunRequest, WorkerMessage } from './protocol.js';

const $ = <T extends Element>(selector: string): T => {
  const el = document.querySelector<T>(selector);
  if (!el) throw new Error(`lab page: no ${selector}`);
  return el;
};

const form = $<HTMLFormElement>('#settings');
const input = (name: string): HTMLInputElement | HTMLSelectElement => form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement;
const status = $<HTMLElement>('#status');
const progress = $<HTMLProgressElement>('#progress');

function options(select: HTMLSelectElement, items: readonly { value: string; label: string }[]): void {
  select.replaceChildren(...items.map(({ value, label }) => new Option(label, value)));
}

options(input('experiment') as HTMLSelectElement, PAGE_EXPERIMENTS.map((x) => ({ value: x.id, label: x.title })));
options(input('strategy') as HTMLSelectElement, [...HERD_STRATEGIES.map((s) => ({ value: s, label: s })), { value: 'custom', label: 'custom (edit the backoff below)' }]);
options(input('kind') as HTMLSelectElement, BACKOFF_KINDS.map((k) => ({ value: k, label: k })));

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

function writeForm(values: FormValues): void {
  for (const key of ['experiment', 'strategy', 'kind', 'maxAttempts', 'clients', 'capacity', 'crashLimit', 'spreadMs', 'seeds'] as const) {
    input(key).value = values[key];
  }
  renderParams(values);
}

function readForm(): FormValues {
  const params: Record<string, string> = {};
  for (const el of form.querySelectorAll<HTMLInputElement>('#params input')) params[el.name.slice('param:'.length)] = el.value;
  const v = (name: string): string => input(name).value;
  return {
    experiment: v('experiment'),
    strategy: v('strategy'),
    kind: v('kind'),
    params,
    maxAttempts: v('maxAttempts'),
    clients: v('clients'),
    capacity: v('capacity'),
    crashLimit: v('crashLimit'),
    spreadMs: v('spreadMs'),
    seeds: v('seeds'),
  };
}

function showError(error: FormError | null): void {
  for (const el of form.querySelectorAll('[data-error-for]')) el.textContent = '';
  for (const el of form.querySelectorAll('.invalid')) el.classList.remove('invalid');
  if (!error) return;
  const slot = form.querySelector(`[data-error-for="${CSS.escape(error.input)}"]`) ?? form.querySelector('[data-error-for="form"]')!;
  slot.textContent = error.message;
  form.querySelector(`[data-input="${CSS.escape(error.input)}"]`)?.classList.add('invalid');
}

/** The CLI command that prints the same table. */
function cliCommand(values: FormValues, run: HerdRun): string {
  const viaConfig = `npm run lab -- herd --config scenario.json --seeds ${seedText(run.seeds)}`;
  // A custom backoff is no herd preset: only the scenario file reproduces it.
  if (!(HERD_STRATEGIES as readonly string[]).includes(values.strategy)) return viaConfig;
  const preset = defaultForm(values.strategy as HerdStrategy);
  const strategy = strategyFields(values.strategy as HerdStrategy);
  const standard =
    (HERD_STRATEGIES as readonly string[]).includes(values.strategy) &&
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

const views = new Map<string, View>();

/** Renders a spec into a container with Vega's SVG renderer and its CSP-safe expression interpreter. */
async function draw(selector: string, spec: TopLevelSpec): Promise<void> {
  views.get(selector)?.finalize();
  const view = new View(parse(compile(spec).spec, undefined, { ast: true }), { renderer: 'svg', container: selector, hover: true, expr: expressionInterpreter });
  views.set(selector, view);
  await view.runAsync();
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

function setState(state: 'running' | 'done' | 'invalid' | 'failed'): void {
  document.body.dataset.state = state;
}

function start(): void {
  const values = readForm();
  const checked = validateForm(values);
  if (!checked.ok) {
    showError(checked.error);
    status.textContent = 'fix the highlighted field to run';
    setState('invalid');
    return;
  }
  showError(null);
  if (worker && busy) {
    worker.terminate(); // a newer request wins; the old run is dropped
    worker = null;
  }
  worker ??= new Worker('/sim-worker.js', { type: 'module' });
  const id = ++runId;
  const { run } = checked;
  const started = performance.now();
  busy = true;
  setState('running');
  progress.value = 0;
  status.textContent = 'running…';
  worker.onmessage = (event: MessageEvent<WorkerMessage>) => {
    const msg = event.data;
    if (msg.id !== id) return;
    if (msg.type === 'progress') {
      progress.value = msg.done / msg.total;
      status.textContent = `running: ${msg.done} of ${msg.total} runs`;
    } else if (msg.type === 'error') {
      busy = false;
      status.textContent = `the run failed: ${msg.message}`;
      setState('failed');
    } else {
      busy = false;
      void show(values, run, checked.scenario, msg.runs, msg.bins, performance.now() - started, id);
    }
  };
  worker.postMessage({ type: 'run', id, run } satisfies RunRequest);
}

async function show(
  values: FormValues,
  run: HerdRun,
  scenario: object,
  runs: Extract<WorkerMessage, { type: 'done' }>['runs'],
  bins: Extract<WorkerMessage, { type: 'done' }>['bins'],
  ms: number,
  id: number,
): Promise<void> {
  const result: HerdResult = { run, rows: runs.map((r) => herdRow(r.policy, r.results)), runs };
  $<HTMLElement>('#table').textContent = `${describeRun(run)}\n${herdTable(result)}`;
  $<HTMLElement>('#cli').textContent = cliCommand(values, run);
  $<HTMLElement>('#links').replaceChildren(
    dataLink(JSON.stringify(herdJson(result, true)), 'application/json', 'herd.json', 'JSON (as --format json --per-seed)'),
    dataLink(`${herdCsv(result, true)}\n`, 'text/csv', 'herd.csv', 'CSV'),
    dataLink(`${JSON.stringify(scenario, null, 2)}\n`, 'application/json', 'scenario.json', 'scenario.json (for --config)'),
  );
  const server = run.base.server;
  const end = Math.max(1, ...bins.map((b) => b.t2));
  await draw(
    '#chart-arrivals',
    arrivalsSpec(bins, [{ series: run.policies[0]!.name, title: `${run.policies[0]!.name}, seed ${run.seeds[0]}` }], {
      capacity: (server.capacityPerTick * 100) / server.tickMs,
      binMs: 100,
      windowS: Math.ceil(end),
      height: 200,
    }),
  );
  await draw('#chart-seeds', perSeedSpec(seedRows(result)));
  if (id !== runId) return;
  progress.value = 1;
  status.textContent = `done: ${runs.reduce((n, r) => n + r.results.length, 0)} runs in ${(ms / 1000).toFixed(1)} s`;
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
    if (preset) input('spreadMs').value = String(preset.spreadMs);
  }
  schedule();
});
form.addEventListener('input', (event) => {
  const name = (event.target as HTMLInputElement).name;
  // Editing the backoff makes it a policy of one's own (the table then names it "custom …").
  if (name.startsWith('param:') || name === 'maxAttempts') input('strategy').value = 'custom';
  schedule();
});
form.addEventListener('submit', (event) => {
  event.preventDefault();
  clearTimeout(timer);
  start();
});

writeForm(defaultForm());
start();
