/**
 * A line chart as a standalone SVG string: one line per system, the median at each x, a bar for
 * the min–max over runs, and a cross on the top edge where a system did not complete. Linear or
 * logarithmic axes. No dependencies; the same input always gives the same bytes.
 */
import type { ChartSpec } from './part-result.ts';

const WIDTH = 720;
const HEIGHT = 420;
const LEFT = 78;
const RIGHT = 190;
const TOP = 44;
const BOTTOM = 58;
const COLORS = ['#1b6ac9', '#d1495b', '#2a9d52', '#8e44ad', '#e08e0b', '#5b6770', '#00838f', '#6d4c41'];

function escapeXml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');
}

/** A short label for a tick value: 10k, 1M, 0.5, 1.2k. */
export function tickLabel(value: number): string {
  const abs = Math.abs(value);
  const trim = (n: number): string =>
    Number.isInteger(n) ? String(n) : n.toPrecision(2).replace(/\.?0+$/, '');
  if (abs >= 1e6) return `${trim(value / 1e6)}M`;
  if (abs >= 1e3) return `${trim(value / 1e3)}k`;
  if (abs === 0) return '0';
  return trim(value);
}

interface Axis {
  readonly toPixel: (value: number) => number;
  readonly ticks: readonly number[];
}

function axis(values: readonly number[], log: boolean, from: number, to: number, zeroBased: boolean): Axis {
  // Figures of a benchmark: anything beyond these bounds is a broken input, kept off the axis.
  const usable = values.filter((v) => Number.isFinite(v) && Math.abs(v) < 1e15 && (!log || v >= 1e-9));
  let lo = usable.length === 0 ? 1 : Math.min(...usable);
  let hi = usable.length === 0 ? 10 : Math.max(...usable);
  if (log) {
    lo = 10 ** Math.floor(Math.log10(lo));
    hi = 10 ** Math.ceil(Math.log10(hi));
    if (hi === lo) hi = lo * 10;
    const ticks: number[] = [];
    for (let t = lo; t <= hi * 1.0001; t *= 10) ticks.push(t);
    const span = Math.log10(hi) - Math.log10(lo);
    return {
      toPixel: (v) => from + ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / span) * (to - from),
      ticks,
    };
  }
  if (zeroBased) lo = Math.min(0, lo);
  if (hi - lo < 1e-9) hi = lo + 1;
  const rawStep = (hi - lo) / 5;
  const magnitude = 10 ** Math.floor(Math.log10(rawStep));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * magnitude >= rawStep) ?? 10) * magnitude;
  lo = Math.floor(lo / step) * step;
  hi = Math.ceil(hi / step) * step;
  const ticks: number[] = [];
  for (let t = lo; t <= hi + step / 2; t += step) ticks.push(Number(t.toPrecision(12)));
  return { toPixel: (v) => from + ((v - lo) / (hi - lo)) * (to - from), ticks };
}

/** Renders `spec` as an SVG document. Series without points still get a legend entry. */
export function renderChart(spec: ChartSpec): string {
  const xs = spec.series.flatMap((s) => [...s.points.map((p) => p.x), ...(s.failedAt ?? [])]);
  const ys = spec.series.flatMap((s) => s.points.flatMap((p) => [p.y, p.min, p.max]));
  const finite = (v: number): boolean => Number.isFinite(v) && Math.abs(v) < 1e15;
  const x = axis(xs.filter(finite), spec.logX === true, LEFT, WIDTH - RIGHT, false);
  const y = axis(ys.filter(finite), spec.logY === true, HEIGHT - BOTTOM, TOP, true);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="system-ui, sans-serif" font-size="12">`,
    `<title>${escapeXml(spec.title)}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${LEFT}" y="24" font-size="15" font-weight="600">${escapeXml(spec.title)}</text>`,
  ];
  for (const t of y.ticks) {
    const py = y.toPixel(t).toFixed(1);
    out.push(
      `<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${py}" y2="${py}" stroke="#e3e3e3"/>`,
      `<text x="${LEFT - 6}" y="${py}" text-anchor="end" dominant-baseline="middle" fill="#444">${tickLabel(t)}</text>`,
    );
  }
  for (const t of x.ticks) {
    const px = x.toPixel(t).toFixed(1);
    out.push(
      `<line x1="${px}" x2="${px}" y1="${TOP}" y2="${HEIGHT - BOTTOM}" stroke="#f0f0f0"/>`,
      `<text x="${px}" y="${HEIGHT - BOTTOM + 16}" text-anchor="middle" fill="#444">${tickLabel(t)}</text>`,
    );
  }
  out.push(
    `<rect x="${LEFT}" y="${TOP}" width="${WIDTH - LEFT - RIGHT}" height="${HEIGHT - TOP - BOTTOM}" fill="none" stroke="#999"/>`,
    `<text x="${(LEFT + WIDTH - RIGHT) / 2}" y="${HEIGHT - 16}" text-anchor="middle">${escapeXml(spec.xLabel)}</text>`,
    `<text transform="translate(18 ${(TOP + HEIGHT - BOTTOM) / 2}) rotate(-90)" text-anchor="middle">${escapeXml(spec.yLabel)}</text>`,
  );
  spec.series.forEach((series, index) => {
    const color = COLORS[index % COLORS.length] as string;
    const points = series.points.filter((p) => finite(p.x) && finite(p.y)).sort((a, b) => a.x - b.x);
    if (points.length > 1) {
      const d = points.map(
        (p, i) => `${i === 0 ? 'M' : 'L'}${x.toPixel(p.x).toFixed(1)} ${y.toPixel(p.y).toFixed(1)}`,
      );
      out.push(`<path d="${d.join(' ')}" fill="none" stroke="${color}" stroke-width="2"/>`);
    }
    for (const p of points) {
      const px = x.toPixel(p.x).toFixed(1);
      if (finite(p.min) && finite(p.max) && p.max > p.min) {
        out.push(
          `<line x1="${px}" x2="${px}" y1="${y.toPixel(p.min).toFixed(1)}" y2="${y.toPixel(p.max).toFixed(1)}" stroke="${color}" stroke-width="1.5" opacity="0.6"/>`,
        );
      }
      out.push(`<circle cx="${px}" cy="${y.toPixel(p.y).toFixed(1)}" r="3.5" fill="${color}"/>`);
    }
    for (const failed of series.failedAt ?? []) {
      const px = x.toPixel(failed);
      const py = TOP + 8 + index * 3;
      out.push(
        `<path d="M${(px - 5).toFixed(1)} ${py - 5} L${(px + 5).toFixed(1)} ${py + 5} M${(px - 5).toFixed(1)} ${py + 5} L${(px + 5).toFixed(1)} ${py - 5}" stroke="${color}" stroke-width="2"/>`,
      );
    }
    const ly = TOP + 10 + index * 20;
    out.push(
      `<line x1="${WIDTH - RIGHT + 14}" x2="${WIDTH - RIGHT + 34}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"/>`,
      `<text x="${WIDTH - RIGHT + 40}" y="${ly}" dominant-baseline="middle">${escapeXml(series.name)}</text>`,
    );
  });
  if (spec.series.some((s) => (s.failedAt ?? []).length > 0)) {
    out.push(
      `<text x="${WIDTH - RIGHT + 14}" y="${HEIGHT - BOTTOM}" fill="#444">× on the top edge: did not complete</text>`,
    );
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
