// echarts' "common" browser build (line, bar, tooltip, legend, mark lines; canvas and SVG), imported as
// text through the Text rule in wrangler.toml. It is addressed by path: the package's exports hide dist/.
import echartsSource from "../../node_modules/echarts/dist/echarts.common.min.js";
import { sha256Hex } from "../edge/secrets.ts";

/** A file the dashboard serves under /dashboard/assets/, named by its content hash. */
export interface DashboardAsset {
  name: string;
  body: string;
  contentType: string;
}

let echarts: Promise<DashboardAsset> | null = null;

/**
 * The charting library for the dashboard page, served by the Worker itself (no CDN), as
 * `echarts-<first 16 hex of its SHA-256>.min.js`; the hash is computed once per isolate.
 *
 * @example
 * const { name } = await echartsAsset(); // "echarts-3f2a...min.js"
 */
export function echartsAsset(): Promise<DashboardAsset> {
  echarts ??= sha256Hex(echartsSource).then((hash) => ({ name: `echarts-${hash.slice(0, 16)}.min.js`, body: echartsSource, contentType: "text/javascript; charset=utf-8" }));
  return echarts;
}
