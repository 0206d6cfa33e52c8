// Stacked bar charts (Chart.js, bundled): one bar per day, one colour per model.
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip, type TooltipItem } from 'chart.js';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

// Distinguishable colours (Okabe–Ito, then more), the same model the same colour on every chart.
const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#000000', '#7F3C8D', '#11A579', '#3969AC', '#F2B701'];
export const colourOf = (i: number) => PALETTE[i % PALETTE.length]!;

const count = (n: number) => n.toLocaleString('en-US');

/** `colour`: a fixed colour (e.g. red for errors); else the palette's, by position. */
export type Series = { label: string; values: number[]; colour?: string };

/**
 * `format`: how a value reads (axis, tooltip, summary); counts by default. `total`: the summary's
 * total as the API gives it (exact), instead of the plotted values' sum.
 */
export function StackedBars({
  id,
  labels,
  series,
  title,
  unit,
  format = count,
  total: exactTotal,
  note,
}: {
  id: string;
  labels: string[];
  series: Series[];
  title: string;
  unit: string;
  format?: (n: number) => string;
  total?: string;
  note?: ComponentChildren;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart<'bar'> | null>(null);
  useEffect(() => {
    const data = { labels, datasets: series.map((s, i) => ({ label: s.label, data: s.values, backgroundColor: s.colour ?? colourOf(i), borderWidth: 0 })) };
    // The value axis and the tooltips follow the unit and the format they are given now.
    const y = {
      stacked: true,
      beginAtZero: true,
      title: { display: true, text: unit },
      // Counts are whole; amounts of money are not.
      ticks: format === count ? { precision: 0 } : { callback: (v: string | number) => format(Number(v)), maxTicksLimit: 6 },
    };
    const tooltip = {
      callbacks: {
        label: (item: TooltipItem<'bar'>) => `${item.dataset.label ?? ''}: ${format(item.parsed.y ?? 0)}`,
        footer: (items: TooltipItem<'bar'>[]) => `Total: ${format(items.reduce((n, i) => n + (i.parsed.y ?? 0), 0))}`,
      },
    };
    if (chart.current) {
      const options = chart.current.options;
      chart.current.data = data;
      if (options.scales) options.scales.y = y;
      if (options.plugins) options.plugins.tooltip = tooltip;
      chart.current.update();
      return;
    }
    chart.current = new Chart(canvas.current!, {
      type: 'bar',
      data,
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: 'index', intersect: false },
        scales: { x: { stacked: true, grid: { display: false }, ticks: { maxRotation: 0, autoSkip: true, autoSkipPadding: 12 } }, y },
        plugins: { legend: { position: 'bottom', labels: { boxWidth: 12 } }, tooltip },
      },
    });
  }, [labels, series, unit, format]);
  useEffect(() => () => chart.current?.destroy(), []);
  const total = exactTotal ?? format(series.reduce((n, s) => n + s.values.reduce((a, b) => a + b, 0), 0));
  return (
    <figure class="chart">
      <figcaption id={`${id}-caption`}>{title}</figcaption>
      <div class="chart-box">
        <canvas id={id} ref={canvas} role="img" aria-labelledby={`${id}-caption`} aria-describedby={`${id}-summary`} />
      </div>
      <p id={`${id}-summary`} class="visually-hidden">
        {total}
        {format === count ? ` ${unit}` : ''} in total from {labels[0]} to {labels[labels.length - 1]}; the table below has the figures per model.
      </p>
      {note && <p class="chart-note">{note}</p>}
    </figure>
  );
}
