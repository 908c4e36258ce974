import type { TopLevelSpec } from 'vega-lite';

/**
 * Text width in px of `text` in a sans-serif font of `size` px, from average glyph widths (Helvetica's
 * and Arial's, in em): narrow letters and punctuation, digits, wide capitals, and the rest.
 */
export function sansTextWidth(text: string, size: number): number {
  let em = 0;
  for (const c of text) {
    if (/[ilIjtf.,:;'|!()[\]{} ]/.test(c)) em += 0.3;
    else if (/[0-9]/.test(c)) em += 0.56;
    else if (/[mwMW@%]/.test(c)) em += 0.86;
    else if (/[A-Z]/.test(c)) em += 0.68;
    else em += 0.54;
  }
  return Math.ceil(em * size);
}

type Vega = typeof import('vega');

/**
 * Without a canvas, Vega estimates every character at 0.8 em: long titles and labels then count far
 * wider than they draw, which widens charts and truncates labels ("4 attempts + 10% retry r…") in
 * the narrow figures. Vega reads a user-defined `textMetrics.width` (as vl-convert sets one); this is
 * the report's, in Node only (the lab page measures with the browser's canvas).
 */
function measureAsSans(vega: Vega): void {
  const { textMetrics } = vega as unknown as { textMetrics: { width: (item: { fontSize?: number }, text: unknown) => number } };
  textMetrics.width = (item, text) => sansTextWidth(text == null ? '' : String(text), item.fontSize ?? 11);
}

/**
 * Renders a Vega-Lite spec to an SVG document in Node: no canvas and no browser (Vega's headless
 * view, `renderer: 'none'`). The same spec renders unchanged in the lab page.
 *
 * Vega and Vega-Lite load on the first call, not when the lab starts: they take about 0.3 s to
 * import, and only the commands that write figures need them.
 */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const [vega, { compile }] = await Promise.all([import('vega'), import('vega-lite')]);
  measureAsSans(vega);
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
