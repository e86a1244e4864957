import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as echarts from "echarts";
import type { FleetResult } from "../../src/core/sim/fleet/fleet-result.ts";
import { makeDir } from "../../host-agent/util/make-dir.ts";

export type Series = { name: string; points: Array<[number, number]> };

/**
 * One line chart rendered to SVG on the server side (ECharts SSR: no browser, no canvas).
 *
 * @example
 * const svg = lineChart("Load", "hours", "req/s", [{ name: "served", points: [[0, 1], [1, 2]] }]);
 */
export function lineChart(title: string, xName: string, yName: string, series: Series[], o: { symbols?: boolean } = {}): string {
  return render({
    xAxis: { type: "value", name: xName, nameLocation: "middle", nameGap: 25 },
    yAxis: { type: "value", name: yName },
    title: { text: title, left: "center", textStyle: { fontSize: 14 } },
    series: series.map((s) => ({ type: "line", name: s.name, showSymbol: o.symbols ?? false, data: s.points })),
  });
}

/**
 * Grouped bars over named categories, rendered to SVG like `lineChart`.
 *
 * @example
 * const svg = barChart("Energy", "kWh", ["SinglePool", "DynamoLLM"], [{ name: "energy", values: [10, 6] }]);
 */
export function barChart(title: string, yName: string, categories: string[], series: Array<{ name: string; values: number[] }>): string {
  return render({
    xAxis: { type: "category", data: categories },
    yAxis: { type: "value", name: yName },
    title: { text: title, left: "center", textStyle: { fontSize: 14 } },
    series: series.map((s) => ({ type: "bar", name: s.name, data: s.values })),
  });
}

function render(option: Record<string, unknown>): string {
  const chart = echarts.init(null, null, { renderer: "svg", ssr: true, width: 900, height: 360 });
  chart.setOption({ animation: false, legend: { bottom: 0 }, grid: { left: 70, right: 30, top: 40, bottom: 60 }, ...option });
  const svg = chart.renderToSVGString();
  chart.dispose();
  return svg;
}

/**
 * Writes the run's plots as SVG files: each site's power envelope against its draw, carbon
 * intensity, served and dropped load over time, and the E2E latency CDF. Returns the file paths.
 */
export async function writePlots(result: FleetResult, dir: string): Promise<string[]> {
  await makeDir(dir);
  const hours = result.timeline.tS.map((t) => t / 3600);
  const over = (ys: number[], scale = 1): Array<[number, number]> => ys.map((y, i) => [hours[i]!, y * scale]);
  const files: Record<string, string> = {};
  for (const [site, s] of Object.entries(result.timeline.sites)) {
    files[`power-${site}.svg`] = lineChart(`${site}: power envelope vs draw (simulated)`, "hours", "MW", [
      { name: "available", points: over(s.availableW, 1e-6) },
      { name: "draw", points: over(s.drawW, 1e-6) },
    ]);
  }
  files["carbon.svg"] = lineChart("Carbon intensity per site", "hours", "gCO2/kWh", Object.entries(result.timeline.sites).map(([site, s]) => ({ name: site, points: over(s.carbonGPerKwh) })));
  files["load.svg"] = lineChart("Served and dropped load (simulated)", "hours", "req/s", [
    { name: "served", points: over(result.timeline.servedRps) },
    { name: "dropped", points: over(result.timeline.droppedRps) },
  ]);
  files["latency-cdf.svg"] = lineChart("E2E latency CDF (simulated)", "E2E latency (ms)", "share of requests", [{ name: "E2E", points: result.e2eQuantilesMs.map((ms, i) => [ms, (i + 1) / 100]) }]);
  const paths: string[] = [];
  for (const [name, svg] of Object.entries(files)) {
    const path = join(dir, name);
    await writeFile(path, svg);
    paths.push(path);
  }
  return paths;
}
