/** The run's chart: throughput by workload, one plain SVG text (no library). */
import type { Figure, Method } from './report.ts';

const COLORS: Record<Method, string> = { hyperwatch: '#2f6fd0', raw: '#8a8f98', reference: '#e0a030' };

interface Bar {
  readonly label: string;
  readonly value: number;
  readonly kind: Method;
}

function escapeXml(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/**
 * One SVG with a panel per unit (rows/s for single big files, files/s for the flood), a bar per
 * method, hyperwatch in blue, the raw loads in grey, the reference watcher in orange.
 */
export function throughputSvg(figures: readonly Figure[], title: string): string {
  const rowsBars: Bar[] = [];
  const filesBars: Bar[] = [];
  let floodHeading = 'Small-file flood';
  for (const f of figures) {
    if (f.workload.startsWith('small-file flood') && f.files !== undefined) {
      floodHeading = f.workload;
      filesBars.push({ label: `flood: ${f.method}`, value: f.files / f.seconds.median, kind: f.kind });
    } else if (f.rows !== undefined && !f.workload.startsWith('backlog'))
      rowsBars.push({ label: `${f.workload}: ${f.method}`, value: f.rows / f.seconds.median / 1e6, kind: f.kind });
  }
  const width = 960;
  const labelWidth = 420;
  const barHeight = 18;
  const gap = 6;
  const plotWidth = width - labelWidth - 130;
  let y = 56;
  const parts: string[] = [];
  const panel = (heading: string, unit: string, bars: readonly Bar[], digits: number) => {
    if (bars.length === 0) return;
    parts.push(`<text x="10" y="${y}" font-size="14" font-weight="bold">${escapeXml(heading)}</text>`);
    y += 12;
    const max = Math.max(...bars.map((b) => b.value)) || 1;
    let group = '';
    for (const b of bars) {
      // A little air between workloads.
      const workload = b.label.slice(0, b.label.indexOf(':'));
      if (group && workload !== group) y += 8;
      group = workload;
      const w = Math.max(1, (b.value / max) * plotWidth);
      parts.push(`<text x="${labelWidth - 8}" y="${y + barHeight - 5}" font-size="12" text-anchor="end">${escapeXml(b.label)}</text>`);
      parts.push(`<rect x="${labelWidth}" y="${y}" width="${w.toFixed(1)}" height="${barHeight}" fill="${COLORS[b.kind]}"/>`);
      parts.push(
        `<text x="${(labelWidth + w + 6).toFixed(1)}" y="${y + barHeight - 5}" ` +
          `font-size="12">${b.value.toFixed(digits)} ${escapeXml(unit)}</text>`,
      );
      y += barHeight + gap;
    }
    y += 24;
  };
  panel('One file per drop: rows/s (higher is better)', 'M rows/s', rowsBars, 2);
  panel(`${floodHeading[0]!.toUpperCase()}${floodHeading.slice(1)}: files/s (higher is better)`, 'files/s', filesBars, 0);
  const legend = (['hyperwatch', 'raw', 'reference'] as const)
    .map(
      (k, i) =>
        `<rect x="${10 + i * 220}" y="${y}" width="12" height="12" fill="${COLORS[k]}"/><text x="${28 + i * 220}" ` +
        `y="${y + 11}" font-size="12">${
          k === 'raw' ? 'hyperd alone (same run)' : k === 'reference' ? 'reference (figures from another day)' : 'hyperwatch (end to end)'
        }</text>`,
    )
    .join('');
  y += 30;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="22" font-size="16" font-weight="bold">${escapeXml(title)}</text>`,
    ...parts,
    legend,
    '</svg>',
    '',
  ].join('\n');
}
