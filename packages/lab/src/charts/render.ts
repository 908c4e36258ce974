import { parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/**
 * Renders a Vega-Lite spec to an SVG document in Node: no canvas and no browser (Vega's headless
 * view, `renderer: 'none'`). The same spec renders unchanged in the lab page.
 */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new View(parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
