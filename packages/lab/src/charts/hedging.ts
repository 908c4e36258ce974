import type { TopLevelSpec } from 'vega-lite';
import { CHART_CONFIG, type ChartSize } from './specs.js';

/** One point of the hedging figure: a policy's metric at one offered load. */
export interface HedgingPoint {
  policy: string;
  /** Offered load, % of capacity. */
  loadPct: number;
  /** `'p50 (ms)'`, `'p99 (ms)'`, `'p99.9 (ms)'` or `'attempts per call'`. */
  metric: string;
  value: number;
}

/** The panels, top to bottom. */
export const HEDGING_METRICS = ['p50 (ms)', 'p99 (ms)', 'p99.9 (ms)', 'attempts per call'] as const;

/**
 * The hedging figure: p50, p99, p99.9 (log scale) and attempts per call against offered load, one
 * line per policy, one panel per metric stacked vertically with its own y scale.
 */
export function hedgingSpec(points: readonly HedgingPoint[], policies: readonly string[], size: ChartSize = {}): TopLevelSpec {
  // The y axes' labels run to four digits ("3,000" ms) and their title: about 80 px beside the plot,
  // so a narrow copy draws its plot 25 px under the width it is given to stay within 360 px.
  const width = size.width === undefined ? 640 : size.width - 25;
  const legend = size.width === undefined ? {} : { orient: 'bottom', columns: 2 };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    config: CHART_CONFIG,
    data: { values: points as HedgingPoint[] },
    spacing: 16,
    vconcat: HEDGING_METRICS.map((metric) => ({
      title: { text: metric, limit: width },
      width,
      height: 150,
      transform: [
        { filter: { field: 'metric', equal: metric } },
        { calculate: `datum.policy + ', load ' + datum.loadPct + '%: ' + format(datum.value, '.3~r')`, as: 'label' },
      ],
      mark: { type: 'line', point: { filled: true, size: 30 } },
      encoding: {
        description: { field: 'label' },
        x: { field: 'loadPct', type: 'quantitative', title: 'offered load (% of capacity)', scale: { domain: [0, 100] } },
        y: {
          field: 'value',
          type: 'quantitative',
          title: metric,
          scale: metric === 'attempts per call' ? { zero: false } : { type: 'log' },
        },
        // One legend for colour and dash; below the chart on a narrow screen, where a legend at the
        // side would push it past 360 px.
        color: { field: 'policy', type: 'nominal', sort: [...policies], title: 'client', legend: legend },
        strokeDash: { field: 'policy', type: 'nominal', sort: [...policies], title: 'client', legend: legend },
        tooltip: [{ field: 'policy' }, { field: 'loadPct', title: 'load (%)' }, { field: 'value', title: metric, format: '.4~r' }],
      },
    })),
  } as TopLevelSpec;
}
