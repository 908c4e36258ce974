import type { TopLevelSpec } from 'vega-lite';

/**
 * Renders a Vega-Lite spec to an SVG document in Node: no canvas and no browser (Vega's headless
 * view, `renderer: 'none'`). The same spec renders unchanged in the lab page.
 *
 * Vega and Vega-Lite load on the first call, not when the lab starts: they take about 0.3 s to
 * import, and only the commands that write figures need them.
 */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const [{ parse, View }, { compile }] = await Promise.all([import('vega'), import('vega-lite')]);
  const view = new View(parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
