import { renderSvg } from '../charts/render.js';
import { NARROW_WIDTH } from '../charts/specs.js';
import { rowsToCsv } from '../charts/series.js';
import { reportHtml, type ReportMeta, type ShownSection } from './html.js';
import type { Figure, LabExperiment, LabResults } from './registry.js';

/** One file of the report, by its path inside the output folder (always `/`-separated). */
export interface ReportFile {
  path: string;
  content: string;
}

/**
 * Builds every file of the report from the experiments' results: `index.html`, `figures/ID.svg` (and
 * `figures/ID.narrow.svg`, the same figure drawn for screens from 360 px wide),
 * and the data as `data/ID.json` and `data/ID.csv` for each experiment and each figure.
 * @throws Error when a figure names a section that is not among the experiments.
 */
export async function buildReport(
  experiments: readonly LabExperiment[],
  figures: readonly Figure[],
  results: LabResults,
  meta: ReportMeta,
): Promise<ReportFile[]> {
  const files: ReportFile[] = [];
  const sections: ShownSection[] = experiments.map((x) => {
    const result = results.get(x.id);
    const json = `data/${x.id}.json`;
    const csv = `data/${x.id}.csv`;
    files.push({ path: json, content: `${JSON.stringify(x.json(result), null, 1)}\n` }, { path: csv, content: `${x.csv(result)}\n` });
    return { experiment: x, table: x.table(result), json, csv, figures: [] };
  });
  for (const figure of figures) {
    const section = sections.find((s) => s.experiment.id === figure.section);
    if (!section) throw new Error(`report: figure "${figure.id}" belongs to section "${figure.section}", which was not run`);
    const rows = await figure.data(results);
    const svg = `figures/${figure.id}.svg`;
    const narrow = `figures/${figure.id}.narrow.svg`;
    const json = `data/${figure.id}.json`;
    const csv = `data/${figure.id}.csv`;
    files.push(
      { path: svg, content: await renderSvg(figure.spec(rows, {})) },
      { path: narrow, content: await renderSvg(figure.spec(rows, { width: NARROW_WIDTH })) },
      { path: json, content: `${JSON.stringify(rows)}\n` },
      { path: csv, content: `${rowsToCsv(rows)}\n` },
    );
    const explanation = typeof figure.explanation === 'string' ? figure.explanation : figure.explanation(rows);
    section.figures.push({ figure, explanation, svg, narrow, json, csv });
  }
  files.unshift({ path: 'index.html', content: reportHtml(sections, meta) });
  return files;
}
