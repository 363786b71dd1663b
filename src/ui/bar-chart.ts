import { html, type SafeHtml } from './html.js';

/** One bar: its label (a day), its value, and the words a screen reader and a hover show for it. */
export interface Bar {
  label: string;
  value: number;
  text: string;
}

const WIDTH = 720;
const HEIGHT = 220;
const PAD = { top: 16, right: 8, bottom: 28, left: 56 };

/**
 * A bar chart as inline SVG, rendered on the server (no script): an accessible image (role img, a title and a
 * description), one bar per value with its own title (shown on hover), the axis labelled at zero and at its
 * top, and the first, last and about every seventh label under the bars. Colours come from the page's
 * stylesheet (classes), so the dark scheme applies; no inline style, which the CSP forbids.
 */
export function barChart(o: {
  id: string;
  title: string;
  desc: string;
  bars: Bar[];
  unit: (v: number) => string;
}): SafeHtml {
  const max = Math.max(0, ...o.bars.map((b) => b.value));
  const top = max > 0 ? niceCeiling(max) : 1;
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, o.bars.length);
  const barW = Math.max(1, slot * 0.7);
  const every = Math.max(1, Math.ceil(o.bars.length / 8));
  const y = (v: number) => PAD.top + plotH - (v / top) * plotH;
  const bars = o.bars.map((b, i) => {
    const x = PAD.left + i * slot + (slot - barW) / 2;
    const h = Math.max(b.value > 0 ? 1 : 0, (b.value / top) * plotH);
    const last = o.bars.length - 1;
    // The first and last labels, and every `every`th between that is not too close to the last to fit.
    const label =
      i === 0 || i === last || (i % every === 0 && last - i >= every / 2 + 1)
        ? html`<text class="chart-label" x="${fmt(x + barW / 2)}" y="${HEIGHT - 8}" text-anchor="middle">${b.label.slice(5)}</text>`
        : '';
    return html`<g><rect class="chart-bar" x="${fmt(x)}" y="${fmt(PAD.top + plotH - h)}" width="${fmt(barW)}" height="${fmt(h)}"><title>${b.text}</title></rect>${label}</g>`;
  });
  return html`<svg class="chart" id="${o.id}" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${o.id}-title ${o.id}-desc" xmlns="http://www.w3.org/2000/svg">
<title id="${o.id}-title">${o.title}</title>
<desc id="${o.id}-desc">${o.desc}</desc>
<line class="chart-axis" x1="${PAD.left}" y1="${fmt(y(0))}" x2="${WIDTH - PAD.right}" y2="${fmt(y(0))}"/>
<line class="chart-grid" x1="${PAD.left}" y1="${fmt(y(top))}" x2="${WIDTH - PAD.right}" y2="${fmt(y(top))}"/>
<text class="chart-label" x="${PAD.left - 6}" y="${fmt(y(0) + 4)}" text-anchor="end">${o.unit(0)}</text>
<text class="chart-label" x="${PAD.left - 6}" y="${fmt(y(top) + 4)}" text-anchor="end">${o.unit(top)}</text>
${bars}
</svg>`;
}

/** The top of the axis: 1, 2 or 5 times a power of ten, at or above `v`. */
function niceCeiling(v: number): number {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

const fmt = (n: number) => String(Math.round(n * 10) / 10);
