/**
 * The scaling charts of BENCHMARKS.md, drawn from the benchmark results as
 * SVG files with Vega-Lite (compiled to Vega, rendered headless by Vega's
 * own SVG renderer: plain JavaScript, no canvas, no browser). Both are
 * development dependencies of the repository: the library never loads them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * One chart per measure: cost against cluster size, one line per contender
 * (ours, the floor, the reference tool), one panel per sandbox kernel.
 *
 * points: [{ kernel, services, who, value }]; x (services) on a log scale, y too
 * unless logY is false; order: the contenders' order; kernels: the panels' order.
 */
export function scalingSpec({ title, yTitle, points, logY = true, order, kernels }) {
  const whoOrder = order ?? [...new Set(points.map((p) => p.who))];
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: title, anchor: 'start' },
    data: { values: points },
    facet: { column: { field: 'kernel', type: 'nominal', title: null, sort: kernels, header: { labelFontSize: 12, labelFontWeight: 'bold' } } },
    resolve: { scale: { y: 'shared' } },
    spec: {
      width: 280,
      height: 220,
      layer: [
        {
          mark: { type: 'line', point: { size: 50 }, strokeWidth: 2 },
          encoding: {
            x: { field: 'services', type: 'quantitative', title: 'services (x 10 endpoints)', scale: { type: 'log' }, axis: { values: [...new Set(points.map((p) => p.services))], format: '~s' } },
            y: { field: 'value', type: 'quantitative', title: yTitle, scale: logY ? { type: 'log' } : { zero: true } },
            color: { field: 'who', type: 'nominal', title: null, sort: whoOrder, legend: { orient: 'bottom', columns: 1, labelLimit: 400 } },
            strokeDash: { field: 'who', type: 'nominal', sort: whoOrder },
            tooltip: [{ field: 'who' }, { field: 'services' }, { field: 'value', format: '.3~r' }],
          },
        },
      ],
    },
    config: { font: 'sans-serif', view: { stroke: '#ccc' }, axis: { grid: true, gridOpacity: 0.4 } },
  };
}

/** Renders a Vega-Lite spec to FILE (SVG). */
export async function renderSvg(spec, file) {
  const [vega, vegaLite] = await Promise.all([import('vega'), import('vega-lite')]);
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, svg + '\n');
}
