/** The figures of an experiment's results (scripts/browserExperiment.ts). */
import type { Browser } from '@playwright/test';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { buildCurves, labelMetric } from '../src/experiments/aggregate';
import { renderLineChartSvg, type ChartSeries } from '../src/cli/svgChart';
import type { RunResult } from '../src/experiments/results';
import { newContext, slug } from './experimentSession';

/**
 * One PNG per metric: the mean curve per method, with a ± sample-std band over seeds, drawn
 * by the project's SVG chart (src/cli/svgChart.ts: nice ticks, dashes and markers besides
 * colour) and rasterised by this browser.
 */
export async function writeFigures(
  browser: Browser,
  runs: RunResult[],
  metrics: string[],
  dir: string,
  nSeeds: number,
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const size = { width: 960, height: 560 };
  const context = await newContext(browser, size);
  const written: string[] = [];
  try {
    const page = await context.newPage();
    for (const key of metrics) {
      const curves = buildCurves(runs, key).filter((c) => c.steps.length > 0);
      if (curves.length === 0) continue;
      const name = key === 'reward' ? 'Train reward' : labelMetric(key);
      const series: ChartSeries[] = curves.map((c) => ({
        name: c.method,
        points: c.steps.map((x, i) => [x, c.mean[i]] as [number, number]),
        band:
          nSeeds > 1
            ? c.steps.map((x, i) => [x, c.mean[i] - c.std[i], c.mean[i] + c.std[i]] as [number, number, number])
            : undefined,
      }));
      const subtitle = `mean over ${nSeeds === 1 ? '1 seed' : `${nSeeds} seeds (band: ± sample std)`}`;
      const svg = renderLineChartSvg({
        title: `${name} by step`,
        subtitle,
        xLabel: 'step',
        yLabel: name,
        series,
        ...size,
      });
      await page.setContent(`<!doctype html><body style="margin:0">${svg}</body>`);
      const file = path.join(dir, `${slug(key.replace(/\//g, '-'))}.png`);
      await page.screenshot({ path: file, clip: { x: 0, y: 0, ...size } });
      written.push(file);
    }
  } finally {
    await context.close();
  }
  return written;
}
