/** One sample of the Prometheus text exposition format. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(?:\s+-?\d+)?\s*$/;

/**
 * Parses Prometheus text exposition (version 0.0.4): comments and blank lines are skipped, label
 * values are unescaped, `NaN` / `+Inf` / `-Inf` are read as numbers. Lines that are not samples
 * are ignored rather than fatal, as scrapers do.
 *
 * @example
 * parsePrometheusText('vllm:num_requests_running{model_name="m"} 3\n'); // [{ name: "vllm:num_requests_running", labels: { model_name: "m" }, value: 3 }]
 */
export function parsePrometheusText(text: string): PromSample[] {
  const samples: PromSample[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const m = SAMPLE.exec(line);
    if (!m) continue;
    const value = parseValue(m[3]!);
    const labels = m[2] ? parseLabels(m[2].slice(1, -1)) : {};
    if (labels === null || (Number.isNaN(value) && m[3] !== "NaN")) continue;
    samples.push({ name: m[1]!, labels, value });
  }
  return samples;
}

function parseValue(text: string): number {
  if (text === "+Inf" || text === "Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  return Number(text);
}

/** `a="x",b="y\"z"` into a record; null when malformed. */
function parseLabels(body: string): Record<string, string> | null {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < body.length) {
    while (body[i] === " " || body[i] === ",") i++;
    if (i >= body.length) break;
    const eq = body.indexOf("=", i);
    if (eq < 0 || body[eq + 1] !== '"') return null;
    const name = body.slice(i, eq).trim();
    let value = "";
    let j = eq + 2;
    for (; j < body.length && body[j] !== '"'; j++) {
      if (body[j] === "\\" && j + 1 < body.length) {
        j++;
        value += body[j] === "n" ? "\n" : body[j];
      } else value += body[j];
    }
    if (j >= body.length) return null;
    labels[name] = value;
    i = j + 1;
  }
  return labels;
}

/** Sum of every sample named `name` (across label sets); undefined when there is none. */
export function sumOf(samples: readonly PromSample[], name: string): number | undefined {
  let found = false;
  let sum = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    found = true;
    sum += s.value;
  }
  return found ? sum : undefined;
}

/** Highest value of the samples named `name`; undefined when there is none. */
export function maxOf(samples: readonly PromSample[], name: string): number | undefined {
  let max: number | undefined;
  for (const s of samples) if (s.name === name && (max === undefined || s.value > max)) max = s.value;
  return max;
}

type Labels = Record<string, string | number>;

/** One series of a histogram family: its labels and cumulative buckets, sum and count. */
export interface HistogramSeries {
  labels: Labels;
  /** [upper bound, cumulative count], ascending, ending with +Inf. */
  buckets: readonly (readonly [number, number])[];
  sum: number;
  count: number;
}

/**
 * Writes Prometheus text exposition: one HELP and TYPE block per metric family.
 *
 * @example
 * const out = new PrometheusWriter();
 * out.family("greenference_gpu_power_watts", "gauge", "Power drawn by the GPU.", [[{ gpu: 0 }, 312.5]]);
 * out.text(); // "# HELP greenference_gpu_power_watts ...\n# TYPE ... gauge\ngreenference_gpu_power_watts{gpu=\"0\"} 312.5\n"
 */
export class PrometheusWriter {
  private readonly lines: string[] = [];

  family(name: string, type: "gauge" | "counter", help: string, samples: readonly (readonly [Labels, number])[]): this {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) this.lines.push(`${name}${formatLabels(labels)} ${formatValue(value)}`);
    return this;
  }

  /** A histogram family: `<name>_bucket{le=...}` per bound, `<name>_sum` and `<name>_count` per series. */
  histogram(name: string, help: string, series: readonly HistogramSeries[]): this {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
    for (const s of series) {
      for (const [bound, n] of s.buckets) this.lines.push(`${name}_bucket${formatLabels({ ...s.labels, le: bound === Infinity ? "+Inf" : String(bound) })} ${formatValue(n)}`);
      this.lines.push(`${name}_sum${formatLabels(s.labels)} ${formatValue(s.sum)}`, `${name}_count${formatLabels(s.labels)} ${formatValue(s.count)}`);
    }
    return this;
  }

  text(): string {
    return `${this.lines.join("\n")}\n`;
  }
}

function formatLabels(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${String(v).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`);
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}
