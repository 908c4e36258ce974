import type { TopLevelSpec } from 'vega-lite';
import type { ArrivalBin, SeedRow, SummaryRow, WaitPoint } from './series.js';

/*
 * Vega-Lite specs of the lab's charts. Pure data in, a JSON spec out: the report renders them to SVG
 * in Node, the lab page renders the same specs in the browser. Every mark gets an ARIA label such as
 * "time (s): 1.4; arrivals per 100 ms: 1000", which screen readers and the tests read.
 */

const CAPACITY_COLOR = '#d62728';
const BAR_COLOR = '#4c78a8';

/** The look shared by every chart. */
export const CHART_CONFIG = {
  font: 'sans-serif',
  background: 'white',
  padding: 8,
  title: { anchor: 'start', fontSize: 14, subtitleFontSize: 11, subtitleColor: '#555' },
  axis: { labelFontSize: 11, titleFontSize: 12, titleFontWeight: 'normal', labelOverlap: true, labelSeparation: 6 },
  header: { labelFontSize: 12, titleFontSize: 12 },
  legend: { labelFontSize: 11, titleFontSize: 12 },
  view: { stroke: '#ddd' },
} as const;

/**
 * The drawing width of a chart, px: the plot area, not counting the axes' labels (about 60 px more).
 * The report draws every figure twice, at its default width and at {@link NARROW_WIDTH} for screens
 * from 360 px wide; the lab page passes the width of its container.
 */
export interface ChartSize {
  width?: number;
}

/** The plot width of the report's narrow figures: with axes and padding they fit a 360 px screen. */
export const NARROW_WIDTH = 260;

/** One panel of {@link arrivalsSpec}: the bins of one series. */
export interface ArrivalPanel {
  /** Which rows to draw (`ArrivalBin.series`). */
  series: string;
  title: string;
  /** Cut the y axis here (bars above are clipped) and say so in the subtitle. Default: no cut. */
  yMax?: number;
}

/** Options of {@link arrivalsSpec}. */
export interface ArrivalsOptions {
  /** The server's capacity per bin (the dashed red line), requests. */
  capacity: number;
  /** The bin width, ms (for the axis title). */
  binMs: number;
  /** Show t in [0, windowS) s. */
  windowS: number;
  /** Chart width, px. Default 720. */
  width?: number;
  /** Panel height, px. Default 170. */
  height?: number;
}

/**
 * Arrivals per bin, one panel per series stacked vertically, each with the server's capacity as a
 * dashed line: the article's first and fourth figures.
 */
export function arrivalsSpec(rows: readonly ArrivalBin[], panels: readonly ArrivalPanel[], o: ArrivalsOptions): TopLevelSpec {
  const yTitle = `arrivals per ${o.binMs} ms`;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    config: CHART_CONFIG,
    data: { values: rows as ArrivalBin[] },
    spacing: 18,
    vconcat: panels.map((p) => {
      const max = Math.max(0, ...rows.filter((r) => r.series === p.series && r.t < o.windowS).map((r) => r.arrivals));
      const cut = p.yMax !== undefined && max > p.yMax;
      return {
        // The limit keeps a long title from widening a narrow chart (headless Vega over-estimates text width).
        title: cut
          ? { text: p.title, subtitle: `y axis cut at ${p.yMax}: the tallest bar reaches ${max}`, limit: o.width ?? 720 }
          : { text: p.title, limit: o.width ?? 720 },
        width: o.width ?? 720,
        height: o.height ?? 170,
        layer: [
          {
            mark: { type: 'rect', color: BAR_COLOR, clip: true },
            transform: [
              { filter: `datum.series === ${JSON.stringify(p.series)} && datum.t < ${o.windowS} && datum.arrivals > 0` },
              { calculate: "datum.series + ' at ' + datum.t + '-' + datum.t2 + ' s: ' + datum.arrivals + ' arrivals'", as: 'label' },
            ],
            encoding: {
              x: { field: 't', type: 'quantitative', title: 'time (s)', scale: { domain: [0, o.windowS], nice: false } },
              x2: { field: 't2' },
              y: {
                field: 'arrivals',
                type: 'quantitative',
                title: yTitle,
                ...(cut ? { scale: { domain: [0, p.yMax!], nice: false } } : {}),
              },
              y2: { datum: 0 },
              description: { field: 'label' },
              tooltip: [
                { field: 't', title: 'from (s)' },
                { field: 'arrivals', title: yTitle },
              ],
            },
          },
          {
            data: { values: [{}] },
            mark: { type: 'rule', color: CAPACITY_COLOR, strokeDash: [6, 4], strokeWidth: 1.5 },
            encoding: { y: { datum: o.capacity } },
          },
          {
            data: { values: [{}] },
            mark: { type: 'text', color: CAPACITY_COLOR, align: 'right', baseline: 'bottom', dy: -3, fontSize: 11 },
            encoding: {
              // At the right edge in pixels: a datum on the x scale would also count toward the chart's bounds.
              x: { value: o.width ?? 720 },
              y: { datum: o.capacity },
              text: { value: `capacity: ${o.capacity} per ${o.binMs} ms` },
            },
          },
        ],
      };
    }),
  } as TopLevelSpec;
}

/**
 * Each client's wait per failure count, one panel per strategy, with the no-jitter value dashed:
 * the article's second figure.
 */
export function waitsSpec(points: readonly WaitPoint[], strategies: readonly string[], size: ChartSize = {}): TopLevelSpec {
  // Side by side from about 700 px; one above the other when narrower.
  const narrow = size.width !== undefined && size.width < 600;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    config: CHART_CONFIG,
    data: { values: points as WaitPoint[] },
    facet: { field: 'strategy', type: 'nominal', sort: [...strategies], title: null },
    columns: narrow ? 1 : strategies.length,
    spec: {
      width: narrow ? size.width! : size.width === undefined ? 230 : Math.floor((size.width - 60 * strategies.length) / strategies.length),
      height: narrow ? 180 : 220,
      layer: [
        {
          mark: { type: 'point', filled: true, size: 14, opacity: 0.7 },
          transform: [{ calculate: "datum.strategy + ', client ' + datum.client + ', failure ' + datum.failure + ': wait ' + datum.waitS + ' s'", as: 'label' }],
          encoding: {
            description: { field: 'label' },
            x: { field: 'failure', type: 'ordinal', title: 'failure count', axis: { labelAngle: 0 } },
            xOffset: { field: 'client', type: 'ordinal', legend: null },
            y: { field: 'waitS', type: 'quantitative', title: 'wait (s)' },
            color: { field: 'strategy', type: 'nominal', sort: [...strategies], legend: null },
            tooltip: [
              { field: 'client' },
              { field: 'failure' },
              { field: 'waitS', title: 'wait (s)', format: '.3f' },
            ],
          },
        },
        {
          mark: { type: 'line', color: '#333', strokeDash: [5, 4], strokeWidth: 1.5, point: false },
          encoding: {
            description: { value: 'the wait without jitter' },
            x: { field: 'failure', type: 'ordinal' },
            y: { field: 'noJitterS', type: 'quantitative', aggregate: 'max', title: 'wait (s)' },
          },
        },
      ],
    },
  } as TopLevelSpec;
}

/**
 * Finish time and total requests per strategy over the seeds — mean as a dot, min–max as a bar —
 * with strategies that never finished in a second colour: the article's third figure.
 */
export function summarySpec(rows: readonly SummaryRow[], o: { horizonS: number; width?: number }): TopLevelSpec {
  const strategies = [...new Set(rows.map((r) => r.strategy))];
  // Two panels side by side from about 900 px, else one above the other at the given width.
  const narrow = o.width !== undefined && o.width < 800;
  const panelWidth = o.width === undefined ? 330 : narrow ? o.width - 90 : Math.floor(o.width / 2) - 120;
  const panel = (metric: SummaryRow['metric'], title: string, log: boolean) => ({
    title: { text: title },
    width: panelWidth,
    height: 26 * strategies.length,
    transform: [
      { filter: `datum.metric === ${JSON.stringify(metric)}` },
      { calculate: `datum.unfinished > 0 ? 'not finished by ${o.horizonS} s' : 'all finished'`, as: 'outcome' },
    ],
    encoding: {
      y: { field: 'strategy', type: 'nominal', sort: strategies, title: null },
      color: {
        field: 'outcome',
        type: 'nominal',
        title: null,
        scale: { domain: ['all finished', `not finished by ${o.horizonS} s`], range: ['#2ca02c', '#d62728'] },
        legend: narrow ? { orient: 'bottom', direction: 'vertical', labelLimit: 300 } : { orient: 'bottom', labelLimit: 400 },
      },
    },
    layer: [
      {
        mark: { type: 'rule', strokeWidth: 3, opacity: 0.5 },
        encoding: {
          x: { field: 'min', type: 'quantitative', title: log ? `${title} (log scale)` : title, ...(log ? { scale: { type: 'log' } } : { scale: { domainMin: 0 } }) },
          x2: { field: 'max' },
        },
      },
      {
        mark: { type: 'point', filled: true, size: 70 },
        transform: [{ calculate: "datum.strategy + ': ' + datum.metric + ' mean ' + datum.mean + ', min ' + datum.min + ', max ' + datum.max", as: 'label' }],
        encoding: {
          description: { field: 'label' },
          x: { field: 'mean', type: 'quantitative' },
          tooltip: [
            { field: 'strategy' },
            { field: 'mean', format: log ? ',.0f' : '.2f' },
            { field: 'min', format: log ? ',.0f' : '.2f' },
            { field: 'max', format: log ? ',.0f' : '.2f' },
          ],
        },
      },
      {
        mark: { type: 'text', align: 'left', dx: 8, dy: -9, fontSize: 10, color: '#333' },
        encoding: { x: { field: 'mean', type: 'quantitative' }, text: { field: 'mean', format: log ? ',.0f' : '.2f' } },
      },
    ],
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    config: CHART_CONFIG,
    data: { values: rows as SummaryRow[] },
    ...(narrow
      ? { vconcat: [panel('finish s', 'finish time (s)', false), panel('requests', 'total requests', true)] }
      : { hconcat: [panel('finish s', 'finish time (s)', false), panel('requests', 'total requests', true)] }),
    resolve: { scale: { x: 'independent' } },
  } as TopLevelSpec;
}

/**
 * The lab page's per-run chart: finish time, requests and requests that gave up (ran out of attempts
 * or were refused by a budget), one bar per seed; side by side when `size.width` allows, else stacked.
 */
export function perSeedSpec(rows: readonly SeedRow[], size: ChartSize = {}): TopLevelSpec {
  const fields = [
    ['finishS', 'finish (s)'],
    ['requests', 'requests'],
    ['gaveUp', 'gave up'],
  ] as const;
  const columns = size.width === undefined ? 3 : Math.max(1, Math.min(3, Math.floor(size.width / 300)));
  const noneGaveUp = rows.every((r) => r.gaveUp === 0);
  const width = size.width === undefined ? 240 : Math.max(160, Math.floor(size.width / columns) - 80);
  const panel = (field: (typeof fields)[number][0], title: string) => ({
    title: { text: title },
    width,
    height: 150,
    mark: { type: 'bar', color: field === 'gaveUp' ? CAPACITY_COLOR : BAR_COLOR },
    transform: [{ calculate: `datum.strategy + ' seed ' + datum.seed + ': ${field} ' + datum.${field}`, as: 'label' }],
    encoding: {
      description: { field: 'label' },
      x: { field: 'seed', type: 'ordinal', title: 'seed', axis: { labelAngle: 0 } },
      // No request gave up: an axis from 0 to 1 rather than a degenerate 0–0 one.
      y: { field, type: 'quantitative', title, ...(field === 'gaveUp' && noneGaveUp ? { scale: { domain: [0, 1] } } : {}) },
      tooltip: [{ field: 'seed' }, { field, title }],
    },
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    config: CHART_CONFIG,
    data: { values: rows as SeedRow[] },
    columns,
    concat: fields.map(([field, title]) => panel(field, title)),
  } as TopLevelSpec;
}

/** One point of {@link tokensSpec}: client 0's tokens after a tick. */
export interface TokenPoint {
  t: number;
  tokens: number;
}

/**
 * One client's retryThrottling tokens over time, with the outage shaded and the throttle line
 * (maxTokens / 2, at or below which no retry is sent) dashed: the article's token figure.
 */
export function tokensSpec(points: readonly TokenPoint[], o: { outage: { startS: number; endS: number }; maxTokens: number; width?: number }): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    config: CHART_CONFIG,
    width: o.width ?? 720,
    height: 200,
    layer: [
      {
        data: { values: [{ from: o.outage.startS, to: o.outage.endS }] },
        mark: { type: 'rect', color: '#f2b6b6', opacity: 0.5 },
        encoding: { x: { field: 'from', type: 'quantitative' }, x2: { field: 'to' } },
      },
      {
        data: { values: points as TokenPoint[] },
        mark: { type: 'line', color: BAR_COLOR, interpolate: 'step-after', strokeWidth: 1.5 },
        encoding: {
          x: { field: 't', type: 'quantitative', title: 'time (s); the outage shaded' },
          y: { field: 'tokens', type: 'quantitative', title: 'tokens', scale: { domain: [0, o.maxTokens] } },
        },
      },
      {
        data: { values: [{ y: o.maxTokens / 2 }] },
        mark: { type: 'rule', color: CAPACITY_COLOR, strokeDash: [6, 4] },
        encoding: { y: { field: 'y', type: 'quantitative' } },
      },
    ],
  };
}

/** One point of {@link perSecondSpec}: a policy's arrivals (or new requests) in one second. */
export interface PerSecondPoint {
  policy: string;
  second: number;
  arrivals: number;
  fresh: number;
}

/** Options of {@link perSecondSpec}. */
export interface PerSecondOptions {
  outage: { startS: number; endS: number };
  /**
   * The server's crash threshold as arrivals per second (the article's server: more than 100 in any
   * 100 ms crashes it, so about 1,000 a second), drawn as a red line on every panel. Default: none.
   */
  crashPerSecond?: number;
  /** Chart width, px. Default 680. */
  width?: number;
}

/**
 * Arrivals per second for each policy (one panel each, the new requests dashed), on one shared
 * y scale so that equal bars mean equal load, with the server's crash threshold: the article's
 * budget figure.
 */
export function perSecondSpec(points: readonly PerSecondPoint[], policies: readonly string[], o: PerSecondOptions): TopLevelSpec {
  const horizon = Math.max(0, ...points.map((p) => p.second)) + 1;
  const xTitle = 'time (s); the outage shaded';
  const x = { type: 'quantitative' as const, scale: { domain: [0, horizon], nice: false }, title: xTitle };
  const top = Math.max(o.crashPerSecond ?? 0, ...points.map((p) => p.arrivals));
  const y = { type: 'quantitative' as const, title: 'arrivals per s', scale: { domain: [0, top], nice: true } };
  const threshold = o.crashPerSecond;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    config: CHART_CONFIG,
    data: { values: points as PerSecondPoint[] },
    transform: [
      { calculate: 'datum.second + 0.9', as: 'secondEnd' },
      { calculate: "datum.policy + ' at ' + datum.second + ' s: ' + datum.arrivals + ' arrivals, ' + datum.fresh + ' new'", as: 'label' },
    ],
    facet: {
      row: {
        field: 'policy',
        type: 'nominal',
        sort: [...policies],
        title: null,
        // The policy is written above its panel by a text mark: a facet header label reserves its
        // whole length beside the panels, widening the chart far past a narrow screen.
        header: { labels: false },
      },
    },
    spacing: 22,
    spec: {
      width: o.width ?? 680,
      height: 80,
      layer: [
        {
          transform: [{ filter: 'datum.second === 0' }],
          mark: { type: 'text', align: 'left', baseline: 'bottom', dy: -4, fontSize: 12, color: '#222', limit: o.width ?? 680 },
          encoding: { x: { value: 0 }, y: { value: 0 }, text: { field: 'policy' } },
        },
        {
          mark: { type: 'rect', color: '#f2b6b6', opacity: 0.35 },
          transform: [{ filter: `datum.second === ${o.outage.startS}` }, { calculate: `${o.outage.endS}`, as: 'end' }],
          encoding: { x: { field: 'second', ...x }, x2: { field: 'end' } },
        },
        {
          mark: { type: 'rect', color: BAR_COLOR },
          encoding: {
            x: { field: 'second', ...x },
            x2: { field: 'secondEnd' },
            y: { field: 'arrivals', ...y },
            description: { field: 'label' },
            tooltip: [{ field: 'second', title: 'second' }, { field: 'arrivals', title: 'arrivals' }, { field: 'fresh', title: 'new' }],
          },
        },
        {
          mark: { type: 'line', color: '#333', strokeDash: [4, 3], interpolate: 'step-after', strokeWidth: 1.2 },
          encoding: { x: { field: 'second', ...x }, y: { field: 'fresh', ...y } },
        },
        ...(threshold === undefined
          ? []
          : [
              {
                transform: [{ filter: 'datum.second === 0' }],
                mark: { type: 'rule' as const, color: CAPACITY_COLOR, strokeDash: [6, 4], strokeWidth: 1.5 },
                encoding: { y: { datum: threshold, ...y }, description: { value: `crash threshold: about ${threshold} arrivals per s` } },
              },
              {
                transform: [{ filter: 'datum.second === 0' }],
                // At the left, where the bars before the outage stay well below the line.
                mark: { type: 'text' as const, color: CAPACITY_COLOR, align: 'left' as const, baseline: 'bottom' as const, dx: 3, dy: -2, fontSize: 10 },
                encoding: { x: { value: 0 }, y: { datum: threshold, ...y }, text: { value: `crash threshold ≈ ${threshold}/s` } },
              },
            ]),
      ],
    },
    resolve: { scale: { y: 'shared' } },
  } as TopLevelSpec;
}

/** One bar of {@link layersSpec}: the calls that reached one service under one policy. */
export interface LayerCallsRow {
  policy: string;
  service: string;
  calls: number;
}

/** The second policy's colour in {@link layersSpec} (the first is the bars' usual blue). */
const SECOND_COLOR = '#f58518';

/**
 * The lab page's layers chart: the calls reaching each service of the chain, top to bottom, one bar
 * per policy side by side (coloured, with a legend), as the table lists them.
 */
export function layersSpec(rows: readonly LayerCallsRow[], size: ChartSize = {}): TopLevelSpec {
  const policies = [...new Set(rows.map((r) => r.policy))];
  const y = { field: 'service', type: 'nominal', sort: null, title: null } as const;
  const yOffset = { field: 'policy', type: 'nominal', sort: policies } as const;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    config: CHART_CONFIG,
    data: { values: rows as LayerCallsRow[] },
    width: size.width ?? 480,
    height: { step: 18 * Math.max(1, policies.length) + 8 },
    transform: [{ calculate: "datum.policy + ', ' + datum.service + ': ' + datum.calls + ' calls'", as: 'label' }],
    layer: [
      {
        mark: { type: 'bar' },
        encoding: {
          y,
          yOffset,
          x: { field: 'calls', type: 'quantitative', title: 'calls' },
          color: { field: 'policy', type: 'nominal', sort: policies, scale: { domain: policies, range: [BAR_COLOR, SECOND_COLOR] }, legend: { orient: 'top', title: null } },
          description: { field: 'label' },
          tooltip: [{ field: 'policy' }, { field: 'service' }, { field: 'calls' }],
        },
      },
      {
        mark: { type: 'text', align: 'left', dx: 4, fontSize: 11 },
        encoding: { y, yOffset, x: { field: 'calls', type: 'quantitative' }, text: { field: 'calls' } },
      },
    ],
  } as TopLevelSpec;
}

/** One point of {@link contentionSpec}: a strategy's means at one client count. */
export interface ContentionPoint {
  clients: number;
  strategy: string;
  /** Mean time until every client has succeeded, ms. */
  timeMs: number;
  /** Mean writes the server received. */
  calls: number;
}

/**
 * The contention experiment's two charts, as in the 2015 post: mean time (log scale: exponential
 * without jitter is ten times the rest) and mean calls against the number of clients, a line per
 * strategy; side by side at the default width, one above the other when narrow.
 */
export function contentionSpec(points: readonly ContentionPoint[], strategies: readonly string[], size: ChartSize = {}): TopLevelSpec {
  const narrow = size.width !== undefined && size.width < 600;
  const width = size.width === undefined ? 300 : narrow ? size.width - 20 : Math.floor(size.width / 2) - 90;
  const panel = (field: 'timeMs' | 'calls', title: string, log: boolean) => ({
    title: { text: title },
    width,
    height: 240,
    mark: { type: 'line', point: { filled: true, size: 40 } },
    transform: [{ calculate: `datum.strategy + ', ' + datum.clients + ' clients: ${field === 'timeMs' ? 'time ' : 'calls '}' + datum.${field}`, as: 'label' }],
    encoding: {
      description: { field: 'label' },
      x: { field: 'clients', type: 'quantitative', title: 'clients', axis: { tickMinStep: 10 } },
      y: { field, type: 'quantitative', title: log ? `${title} (log scale)` : title, ...(log ? { scale: { type: 'log' } } : {}) },
      color: {
        field: 'strategy',
        type: 'nominal',
        sort: [...strategies],
        title: null,
        legend: narrow ? { orient: 'bottom', columns: 2, labelLimit: 300 } : { orient: 'right' },
      },
      tooltip: [{ field: 'strategy' }, { field: 'clients' }, { field, title, format: '.2f' }],
    },
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    config: CHART_CONFIG,
    data: { values: points as ContentionPoint[] },
    ...(narrow
      ? { vconcat: [panel('timeMs', 'mean time (ms)', true), panel('calls', 'mean calls', false)] }
      : { hconcat: [panel('timeMs', 'mean time (ms)', true), panel('calls', 'mean calls', false)] }),
  } as TopLevelSpec;
}

/** One second of one combination in {@link metastableSpec}. */
export interface MetastablePoint {
  /** The combination, e.g. `3 retries · FIFO`. */
  combination: string;
  second: number;
  /** New requests this second. */
  fresh: number;
  /** Attempts reaching the server this second (first tries and retries). */
  offered: number;
  /** Answers this second that reached a client still waiting. */
  goodput: number;
  /** Services this second for clients that had already given up. */
  wasted: number;
}

/**
 * The metastable figure: per second, offered load, goodput and wasted work for each combination, one
 * panel each with the trigger shaded and the new requests dashed; the same y scale in every panel.
 */
export function metastableSpec(points: readonly MetastablePoint[], combinations: readonly string[], o: { trigger: { startS: number; endS: number }; width?: number }): TopLevelSpec {
  const horizon = Math.max(0, ...points.map((p) => p.second)) + 1;
  const x = { type: 'quantitative' as const, scale: { domain: [0, horizon], nice: false }, title: 'time (s); the trigger shaded' };
  const y = { type: 'quantitative' as const, title: 'per s', scale: { domain: [0, Math.max(1, ...points.map((p) => Math.max(p.offered, p.goodput, p.wasted)))], nice: true } };
  const series = ['offered', 'goodput', 'wasted'];
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    config: CHART_CONFIG,
    data: { values: points as MetastablePoint[] },
    facet: { row: { field: 'combination', type: 'nominal', sort: [...combinations], title: null, header: { labels: false } } },
    spacing: 22,
    spec: {
      width: o.width ?? 680,
      height: 80,
      layer: [
        {
          transform: [{ filter: 'datum.second === 0' }],
          mark: { type: 'text', align: 'left', baseline: 'bottom', dy: -4, fontSize: 12, color: '#222', limit: o.width ?? 680 },
          encoding: { x: { value: 0 }, y: { value: 0 }, text: { field: 'combination' } },
        },
        {
          mark: { type: 'rect', color: '#f2b6b6', opacity: 0.35 },
          transform: [{ filter: 'datum.second === 0' }, { calculate: `${o.trigger.startS}`, as: 'start' }, { calculate: `${o.trigger.endS}`, as: 'end' }],
          encoding: { x: { field: 'start', ...x }, x2: { field: 'end' } },
        },
        {
          mark: { type: 'line', interpolate: 'step-after', strokeWidth: 1.6 },
          transform: [
            { fold: series, as: ['series', 'value'] },
            { calculate: "datum.combination + ' at ' + datum.second + ' s: ' + datum.series + ' ' + datum.value + ' per s'", as: 'label' },
          ],
          encoding: {
            x: { field: 'second', ...x },
            y: { field: 'value', ...y },
            color: {
              field: 'series',
              type: 'nominal',
              title: null,
              scale: { domain: series, range: [BAR_COLOR, '#2ca02c', CAPACITY_COLOR] },
              legend: { orient: 'top', direction: 'horizontal' },
            },
            description: { field: 'label' },
            tooltip: [{ field: 'second' }, { field: 'series' }, { field: 'value', title: 'per s' }],
          },
        },
        {
          mark: { type: 'line', color: '#333', strokeDash: [4, 3], interpolate: 'step-after', strokeWidth: 1 },
          encoding: { x: { field: 'second', ...x }, y: { field: 'fresh', ...y }, description: { value: 'new requests per s' } },
        },
      ],
    },
    resolve: { scale: { y: 'shared' } },
  } as TopLevelSpec;
}

/** One second of {@link queueSpec}: the queue of one combination at a second's end. */
export interface QueuePoint {
  combination: string;
  second: number;
  queue: number;
}

/** Queue length at each second's end, a line per combination, on a symmetric-log scale (0 and 25,000 on one axis). */
export function queueSpec(points: readonly QueuePoint[], combinations: readonly string[], o: { trigger: { startS: number; endS: number }; width?: number }): TopLevelSpec {
  const narrow = o.width !== undefined && o.width < 600;
  const x = { type: 'quantitative' as const, title: 'time (s); the trigger shaded' };
  // Powers of ten up to the longest queue: a symlog axis left to itself labels only the top.
  const top = Math.max(1, ...points.map((p) => p.queue));
  const ticks = [0, ...Array.from({ length: Math.ceil(Math.log10(top)) + 1 }, (_, i) => 10 ** i).filter((v) => v <= top * 10)];
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    config: CHART_CONFIG,
    data: { values: points as QueuePoint[] },
    width: o.width ?? 560,
    height: 260,
    layer: [
      {
        mark: { type: 'rect', color: '#f2b6b6', opacity: 0.35 },
        transform: [{ filter: 'datum.second === 0' }, { filter: `datum.combination === ${JSON.stringify(combinations[0] ?? '')}` }, { calculate: `${o.trigger.startS}`, as: 'start' }, { calculate: `${o.trigger.endS}`, as: 'end' }],
        encoding: { x: { field: 'start', ...x }, x2: { field: 'end' } },
      },
      {
        mark: { type: 'line', strokeWidth: 1.6 },
        transform: [{ calculate: "datum.combination + ' at ' + datum.second + ' s: queue ' + datum.queue", as: 'label' }],
        encoding: {
          x: { field: 'second', ...x },
          y: { field: 'queue', type: 'quantitative', title: 'queued requests (symlog scale)', scale: { type: 'symlog' }, axis: { values: ticks } },
          color: { field: 'combination', type: 'nominal', sort: [...combinations], title: null, legend: narrow ? { orient: 'bottom', columns: 1, labelLimit: 300 } : { orient: 'right', labelLimit: 300 } },
          description: { field: 'label' },
          tooltip: [{ field: 'combination' }, { field: 'second' }, { field: 'queue' }],
        },
      },
    ],
  } as TopLevelSpec;
}
