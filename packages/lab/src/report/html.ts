import type { Figure, LabExperiment } from './registry.js';

/** A figure as the report shows it: its text and the files written for it. */
export interface ShownFigure {
  figure: Figure;
  explanation: string;
  svg: string;
  /** The figure drawn narrow, shown on screens up to 640 px wide. */
  narrow: string;
  json: string;
  csv: string;
}

/** An experiment as the report shows it. */
export interface ShownSection {
  experiment: LabExperiment;
  table: string;
  json: string;
  csv: string;
  figures: ShownFigure[];
}

/** What the report page says about itself. */
export interface ReportMeta {
  /** The command that wrote this report, e.g. `npm run lab`. */
  command: string;
}

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const STYLE = `
  body { font: 15px/1.5 system-ui, sans-serif; color: #222; margin: 0; background: #fafafa; }
  main { max-width: 1120px; margin: 0 auto; padding: 24px 32px 48px; background: white; }
  h1 { font-size: 26px; margin: 0 0 4px; }
  h2 { font-size: 20px; margin: 40px 0 8px; border-top: 1px solid #ddd; padding-top: 24px; }
  h3 { font-size: 16px; margin: 28px 0 8px; }
  code, pre { font: 13px/1.45 ui-monospace, Menlo, Consolas, monospace; }
  code { background: #f2f2f2; padding: 1px 4px; border-radius: 3px; }
  pre { background: #f6f6f6; border: 1px solid #e4e4e4; padding: 10px 12px; overflow-x: auto; }
  figure { margin: 0 0 8px; }
  figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
  .meta { color: #555; font-size: 13px; }
  nav a { margin-right: 14px; }
  @media (max-width: 640px) {
    main { padding: 12px 10px 32px; }
    body { font-size: 14px; }
  }
`;

/** The report's index.html: per experiment its explanation, command, table and figures. */
export function reportHtml(sections: readonly ShownSection[], meta: ReportMeta): string {
  const e = escapeHtml;
  const link = (file: string): string => `<a href="${e(file)}">${e(file.replace(/^.*\//, ''))}</a>`;
  const figureHtml = (f: ShownFigure): string => `
    <figure id="${e(f.figure.id)}">
      <h3>${e(f.figure.title)}</h3>
      <picture>
        <source media="(max-width: 640px)" srcset="${e(f.narrow)}">
        <img src="${e(f.svg)}" alt="${e(f.figure.title)}">
      </picture>
      <figcaption>
        <p>${e(f.explanation)}</p>
        <p class="meta">Data: <code>${e(f.figure.command)}</code> · ${link(f.json)} · ${link(f.csv)}</p>
      </figcaption>
    </figure>`;
  const sectionHtml = (s: ShownSection): string => `
  <section id="${e(s.experiment.id)}">
    <h2>${e(s.experiment.title)}</h2>
    <p>${e(s.experiment.explanation)}</p>
    <p class="meta">Command: <code>${e(s.experiment.command)}</code> · seeds ${e(s.experiment.seeds)} · data: ${link(s.json)} · ${link(s.csv)}</p>
    <pre>${e(s.table)}</pre>
    ${s.figures.map(figureHtml).join('\n')}
  </section>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>herdless lab report</title>
<style>${STYLE}</style>
</head>
<body>
<main>
  <h1>herdless lab report</h1>
  <p>The article's retry experiments, rerun by the herdless simulator with the library's own backoff objects in virtual
  time. Every number is deterministic: the same command and seeds give the same tables and figures on any machine.</p>
  <p class="meta">Written by <code>${e(meta.command)}</code>. Try your own policy in the browser: <code>npm run lab -- serve</code>.</p>
  <nav>${sections.map((s) => `<a href="#${e(s.experiment.id)}">${e(s.experiment.title)}</a>`).join('')}</nav>
  ${sections.map(sectionHtml).join('\n')}
</main>
</body>
</html>
`;
}
