/*
 * The operator dashboard page (GET /dashboard). It holds no data: its scripts (dashboard-charts.js,
 * then dashboard-client.js) poll GET /dashboard/v1/state and render it with echarts (SVG), which the
 * Worker serves itself. Until the first state arrives every figure says "loading…".
 *
 * Stable hooks for browser tests (numbers also carry the raw figure in `data-value`, empty when unknown):
 * - `#dashboard[data-updated-at]`  the state's generatedAtMs, changed by every refresh;
 *   `#dashboard[data-state]`       "loading" | "auth" (token needed) | "no-fleet" | "ok" | "error" (last refresh failed; data kept).
 * - `[data-field="plan-version"]`, `[data-field="plan-made-at"]` (data-value: epoch ms), `[data-field="plan-policy"]`.
 * - `[data-field="fleet-draw-w"]`, `[data-field="fleet-envelope-w"]` (data-value: usable W), `[data-field="fleet-slo-label"]`
 *   ("SLO attainment (last 5 min, N requests)"), `[data-field="fleet-slo-attainment"]` (data-value: 0..1, empty with too few
 *   requests), `[data-field="carbon-g"]`, `[data-field="baseline-carbon-g"]`, `[data-field="energy-j"]`.
 * - One `[data-site="<id>"]` card per fleet site (`data-healthy="true|false"`), containing
 *   `[data-field="power-envelope-w"]`, `[data-field="power-draw-w"]`, `[data-field="power-capacity-w"]`, `[data-field="plan-cap-w"]`,
 *   `[data-field="carbon-g-per-kwh"]`, `[data-field="gpus"]` (data-value: GPU count), `[data-field="slo-attainment"]`
 *   (data-value: 0..1), `[data-field="health"]`, `[data-field="applied-plan-version"]`, `[data-field="served-rps"]`, and its
 *   chart `.chart[data-power-scale-w]` (the power axis' top, W).
 * - `[data-class="<id>"]` rows of the class table with `[data-field="class-served-rps"]` and `[data-field="class-slo-attainment"]`.
 * - `[data-field="policy-levers"]`, and `[data-decision-site="<id>"]` rows of the policy-decisions table (variants,
 *   MIG slices, roles, clocks, queue, `[data-field="fairness"]`, `[data-field="prefill-handoffs"]`, `[data-field="emergencies"]`); `[data-field="corrections"]` lists Planner-S corrections.
 * - `[data-field="key-budgets"]` (`data-updated-at`): the table of API keys' carbon budgets and spend, whose
 *   hooks dashboard-key-table.js lists.
 * Query parameters: `?token=` (admin access: kept in sessionStorage, sent as a bearer token, removed
 * from the address bar) and `?refreshMs=` (poll interval, default 2000, at least 500).
 */
import chartsJs from "./dashboard-charts.js";
import clientJs from "./dashboard-client.js";
import keysJs from "./dashboard-key-table.js";

/** A script's text, safe inside a <script> element. */
const inline = (js: string) => js.replace(/<\/(script)/gi, "<\\/$1");
const CHARTS_JS = inline(chartsJs);
const CLIENT_JS = inline(clientJs);
const KEYS_JS = inline(keysJs);

export interface DashboardPageOptions {
  /** Where the page loads echarts from (the Worker's own hashed asset path). */
  echartsSrc: string;
}

const CSS = `
:root { --bg: #f4f6f8; --card: #fff; --ink: #1c2430; --muted: #5d6b7a; --line: #dde3ea; --ok: #1b8a4b; --bad: #c0392b; --warn: #b7791f; --accent: #2563eb; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
header { display: flex; align-items: center; gap: 24px; padding: 12px 24px; background: #102a43; color: #f0f4f8; }
header h1 { font-size: 18px; margin: 0; font-weight: 600; }
header h1 small { font-weight: 400; color: #9fb3c8; margin-left: 6px; }
header .plan { display: flex; gap: 18px; margin-left: auto; align-items: baseline; }
header .plan span.k { color: #9fb3c8; margin-right: 4px; }
header .status { font-size: 12px; color: #9fb3c8; min-width: 150px; text-align: right; }
#dashboard[data-state="error"] header .status { color: #ffb4a8; }
main { padding: 16px 24px 32px; max-width: 1600px; margin: 0 auto; }
.banner { padding: 10px 14px; border-radius: 6px; margin-bottom: 12px; background: #fff4e5; border: 1px solid #f6d8a8; }
.banner:empty { display: none; }
.tiles { display: grid; grid-template-columns: repeat(5, 1fr); gap: 12px; margin-bottom: 16px; }
.tile, .card, .panel { background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
.tile { padding: 10px 14px; }
.tile .k, .metric .k { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
.tile .v { font-size: 22px; font-weight: 600; font-variant-numeric: tabular-nums; }
.tile .sub { color: var(--muted); font-size: 12px; }
.sites { display: grid; grid-template-columns: repeat(auto-fill, minmax(390px, 1fr)); gap: 12px; margin-bottom: 16px; }
.card { padding: 12px 14px; }
.card h2 { font-size: 16px; margin: 0; display: flex; align-items: center; gap: 8px; }
.card h2 .swatch { width: 12px; height: 12px; border-radius: 3px; display: inline-block; }
.card .where { color: var(--muted); font-size: 12px; margin-bottom: 8px; }
.badge { font-size: 11px; font-weight: 600; padding: 2px 8px; border-radius: 10px; background: #e2e8f0; color: var(--muted); margin-left: auto; }
.badge.ok { background: #dcf5e6; color: var(--ok); } .badge.bad { background: #fde2de; color: var(--bad); }
.metrics { display: grid; grid-template-columns: repeat(3, 1fr); gap: 6px 12px; }
.metric .v { font-size: 17px; font-weight: 600; font-variant-numeric: tabular-nums; }
.metric .v.unknown { color: var(--muted); font-weight: 400; font-size: 14px; }
.metric .sub { color: var(--muted); font-size: 11px; min-height: 14px; }
.metric.wide { grid-column: 1 / -1; }
.bar { height: 4px; background: #e2e8f0; border-radius: 2px; margin-top: 3px; overflow: hidden; }
.bar i { display: block; height: 100%; background: var(--ok); width: 0; }
.bar.hot i { background: var(--bad); } .bar.warm i { background: var(--warn); }
.chart { height: 210px; margin-top: 8px; position: relative; }
.empty { position: absolute; inset: 0; display: flex; align-items: center; justify-content: center; color: var(--muted); font-style: italic; background: #fafbfc; border: 1px dashed var(--line); border-radius: 6px; }
.small { font-size: 12px; color: var(--muted); }
table { border-collapse: collapse; width: 100%; font-size: 12px; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid var(--line); }
th { color: var(--muted); font-weight: 500; }
.lower { display: grid; grid-template-columns: 1.3fr 1fr; gap: 12px; }
.panel { padding: 12px 14px; }
.panel h3 { margin: 0 0 8px; font-size: 15px; }
#shares-chart { height: 280px; position: relative; }
#carbon-chart { height: 120px; position: relative; }
.method { font-size: 12px; color: var(--muted); margin-top: 6px; }
.nofleet { padding: 40px; text-align: center; color: var(--muted); font-size: 16px; }
form.token { display: flex; gap: 8px; align-items: center; }
form.token input { flex: 0 0 360px; padding: 6px 8px; border: 1px solid var(--line); border-radius: 4px; }
.keys { margin-top: 12px; }
form.token button { padding: 6px 14px; border: 0; border-radius: 4px; background: var(--accent); color: #fff; cursor: pointer; }
`;

/**
 * The dashboard's HTML, with the styles inline and the client script after the body.
 *
 * @example
 * new Response(dashboardHtml({ echartsSrc: "/dashboard/assets/echarts-0123456789abcdef.min.js" }), { headers: { "content-type": "text/html" } });
 */
export function dashboardHtml(options: DashboardPageOptions): string {
  const config = JSON.stringify({ stateUrl: "/dashboard/v1/state", keysUrl: "/dashboard/v1/keys", keysRefreshMs: 10_000 }).replace(/</g, "\\u003c");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Greenference dashboard</title>
<style>${CSS}</style>
</head>
<body>
<div id="dashboard" data-state="loading" data-updated-at="">
<header>
  <h1>Greenference<small>operator dashboard</small></h1>
  <div class="plan">
    <div><span class="k">plan</span><strong data-field="plan-version" data-value="">loading…</strong></div>
    <div><span class="k">policy</span><span data-field="plan-policy">loading…</span></div>
    <div><span class="k">made</span><span data-field="plan-made-at" data-value="">loading…</span></div>
  </div>
  <div class="status" data-field="status">loading…</div>
</header>
<main>
  <div class="banner" data-field="banner"></div>
  <div data-field="content"><div class="panel nofleet">Loading the fleet's state…</div></div>
  <section class="panel keys" data-field="key-budgets" data-updated-at="">
    <h3>Carbon budgets per API key</h3>
    <table><thead><tr><th>Key</th><th>Budget</th><th>Spent this period</th><th>Pace</th><th>State</th><th>Today</th></tr></thead><tbody></tbody></table>
    <div class="small" data-field="key-note">loading…</div>
  </section>
</main>
</div>
<script type="application/json" id="dashboard-config">${config}</script>
<script src="${options.echartsSrc}"></script>
<script>${CHARTS_JS}</script>
<script>${CLIENT_JS}</script>
<script>${KEYS_JS}</script>
</body>
</html>`;
}
