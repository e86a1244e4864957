import { ConditionedOutputPredictor } from "../../src/core/classify/conditioned-predictor.ts";
import { HistogramOutputPredictor } from "../../src/core/classify/output-predictor.ts";
import { replayPredictor } from "../../src/core/classify/predictor-replay.ts";
import type { ClassScheme } from "../../src/core/schemas/request-class.ts";
import { CLASS_PERCENTILE_METHOD, classCounts, classShares, schemeFromPercentiles } from "../../src/core/workload/class-scheme.ts";
import { loadAzureTrace } from "../../host-agent/data/read-data-file.ts";
import { CliError } from "../../lib/cli-error.ts";
import { parseFlags, positiveInt, printResult, type Command } from "../../lib/command.ts";

const usage = `usage: greenference classes --trace FILE [--input-percentiles 33,66] [--output-percentiles 33,66] [--predictor [--isolates N]] [--json]

Bins the requests of an Azure-format trace (TIMESTAMP,ContextTokens,GeneratedTokens) into classes by
input and output length. Edges are nearest-rank percentiles: the edge for p is the smallest length with
at least p% of requests at or below it; a length equal to an edge falls in the lower bin.

--predictor replays the trace in time order through the edge's classification and reports the class
accuracy of the online output-length predictor (conditioned on prompt length, shared through a
Durable Object) and of the per-isolate histogram it replaced, each learning from every request after
classifying it; also as if N isolates (default 8) each learned alone.`;

/** `greenference classes`: class edges and shares of a trace. */
export const classes: Command = {
  async run(argv) {
    const { values } = parseFlags(
      argv,
      {
        trace: { type: "string" },
        "input-percentiles": { type: "string", default: "33,66" },
        "output-percentiles": { type: "string", default: "33,66" },
        predictor: { type: "boolean", default: false },
        isolates: { type: "string", default: "8" },
        json: { type: "boolean", default: false },
      },
      usage,
    );
    if (values.help) {
      console.log(usage);
      return 0;
    }
    if (!values.trace) throw new CliError(`--trace FILE is required\n${usage}`);
    const inputPercentiles = parsePercentiles(values["input-percentiles"], "--input-percentiles");
    const outputPercentiles = parsePercentiles(values["output-percentiles"], "--output-percentiles");
    const trace = await loadAzureTrace(values.trace);
    const scheme = schemeFromPercentiles(trace.requests, { inputPercentiles, outputPercentiles });
    const result = {
      trace: values.trace,
      requests: trace.requests.length,
      percentileMethod: CLASS_PERCENTILE_METHOD,
      percentiles: { input: inputPercentiles, output: outputPercentiles },
      thresholds: { input: scheme.inputEdges, output: scheme.outputEdges },
      shares: classShares(scheme, trace.requests),
      counts: classCounts(scheme, trace.requests),
      warnings: trace.warnings,
      ...(values.predictor ? { predictor: predictorAccuracy(trace.requests, scheme, positiveInt(values.isolates, "--isolates")) } : {}),
    };
    printResult(result, values.json, () => humanView(result, scheme));
    return 0;
  },
};

/** Class accuracy on the time-ordered replay: the conditioned predictor against the histogram, shared and per isolate. */
function predictorAccuracy(requests: readonly { inputTokens: number; outputTokens: number }[], scheme: ClassScheme, isolates: number) {
  const round = (r: { classAccuracy: number; predicted: number }) => ({ class_accuracy: Math.round(r.classAccuracy * 1e4) / 1e4, predicted_share: Math.round(r.predicted * 1e4) / 1e4 });
  const conditioned = () => new ConditionedOutputPredictor();
  const histogram = () => new HistogramOutputPredictor();
  return {
    replay: "time order; no max_tokens; each request learned after it is classified",
    online: { name: "conditioned on prompt length and key, shared (PredictorDO)", ...round(replayPredictor(requests, scheme, conditioned)) },
    histogram: { name: "histogram per key, as isolate memory held it (one isolate seeing every request)", ...round(replayPredictor(requests, scheme, histogram)) },
    isolates,
    online_isolated: round(replayPredictor(requests, scheme, conditioned, isolates)),
    histogram_isolated: round(replayPredictor(requests, scheme, histogram, isolates)),
  };
}

function parsePercentiles(text: string, flag: string): number[] {
  const ps = text.split(",").map((s) => Number(s.trim()));
  if (ps.some((p) => !(p > 0 && p < 100)) || ps.some((p, i) => i > 0 && p <= ps[i - 1]!)) {
    throw new CliError(`${flag} expects increasing percentiles between 0 and 100, like 33,66; got "${text}"`);
  }
  if (ps.length > 8) throw new CliError(`${flag} takes at most 8 percentiles (9 bins)`);
  return ps;
}

function humanView(r: { trace: string; requests: number; percentiles: { input: number[]; output: number[] }; shares: Record<string, number>; predictor?: ReturnType<typeof predictorAccuracy> }, scheme: ClassScheme): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`.padStart(8);
  const edges = (ps: number[], es: number[]) => ps.map((p, i) => `p${p} = ${es[i]}`).join(", ");
  const lines = [
    `trace    ${r.trace} (${r.requests} requests)`,
    `edges    ${CLASS_PERCENTILE_METHOD} percentiles in tokens; a length equal to an edge is in the lower bin`,
    `  input  ${edges(r.percentiles.input, scheme.inputEdges)}`,
    `  output ${edges(r.percentiles.output, scheme.outputEdges)}`,
    "",
    `share    ${scheme.outputLabels.map((o) => `out ${o}`.padStart(8)).join("")}   total`,
  ];
  for (const i of scheme.inputLabels) {
    const row = scheme.outputLabels.map((o) => r.shares[i + o] ?? 0);
    lines.push(`in ${i.padEnd(5)}${row.map(pct).join("")}${pct(row.reduce((a, b) => a + b, 0))}`);
  }
  if (r.predictor) {
    const p = r.predictor;
    lines.push("", "class accuracy on the time-ordered replay (one isolate / " + p.isolates + " isolates learning alone)");
    lines.push(`  online predictor  ${pct(p.online.class_accuracy)} / ${pct(p.online_isolated.class_accuracy)}   ${p.online.name}`);
    lines.push(`  histogram         ${pct(p.histogram.class_accuracy)} / ${pct(p.histogram_isolated.class_accuracy)}   ${p.histogram.name}`);
  }
  return lines.join("\n");
}
