import { DecayedNnls } from "../../src/core/stats/decayed-nnls.ts";

/** A request's receipt from the meter: measured energy split by observed work, or by assumed work. */
export interface MeteredEnergy {
  energyJ: number;
  /** "measured": its share followed the tokens it was seen to make; "estimated": an unstreamed answer, its share assumed. */
  source: "measured" | "estimated";
}

/** One request the meter follows on one replica's GPUs. */
export interface MeteredRequest {
  /** `count` output tokens went out now (the first one ends the prompt's prefill). */
  token(count?: number): void;
  /** The answer ended; `completionTokens` from its usage corrects the token count. Undefined when a GPU reading failed. */
  finish(completionTokens?: number): Promise<MeteredEnergy | undefined>;
  /** The request ended without an answer: it leaves after the interval it is in. */
  abandon(): void;
}

export interface EnergyMeterOptions {
  /** A GPU's cumulative energy counter, J (NVML's total energy). */
  energyJ(gpu: number): Promise<number>;
  /** Wall clock, ms. Default `performance.now`. */
  nowMs?: () => number;
  /** Period of the counter readings between requests' ends, ms. Default 200. */
  sampleMs?: number;
}

/** Work of one request in one engine step: prompt tokens prefilled, output tokens decoded, the KV those decodes read (k tokens). */
interface Work {
  prefill: number;
  decode: number;
  decodeKvK: number;
}

interface Entry {
  beganMs: number;
  promptTokens: number;
  streams: boolean;
  /** Output tokens so far; the first one ends the prefill. */
  tokens: number;
  energyJ: number;
  ended: boolean;
  failed: boolean;
}

/** Tokens that reached the gateway together: one engine step, and the time since the step before. */
interface Tick {
  /** When its first token arrived. */
  tMs: number;
  /** When its latest token arrived. */
  lastMs: number;
  work: Map<Entry, Work>;
}

interface Group {
  gpus: readonly number[];
  last: { tMs: number; energyJ: number } | undefined;
  open: Set<Entry>;
  ticks: Tick[];
  /** When the group's previous step ended (its last tick), for the next step's duration. */
  lastTickMs: number | undefined;
  /** Energy of intervals with requests in flight but no work seen yet (prefills under way), for the next interval. */
  carryJ: number;
  /** Step duration (s) against its prefill (k tokens). */
  stepFit: DecayedNnls;
  /** A close is scheduled for the end of this turn. */
  closeSoon: boolean;
  fit: DecayedNnls;
  chain: Promise<void>;
}

/** The energy model's coefficients: busy and idle power (W), J per prompt token, per output token, per k tokens of KV read. */
export interface WorkWeights {
  busyW: number;
  idleW: number;
  prefill: number;
  decode: number;
  decodeKvK: number;
}

/** Before the fit has seen enough intervals: shares by tokens alone, a prompt token a tenth of an output token, as the edge's estimate. */
const DEFAULT_WEIGHTS: WorkWeights = { busyW: 0, idleW: 0, prefill: 0.1, decode: 1, decodeKvK: 0 };
/** Intervals with work the fit needs before its weights are used. */
const MIN_FITTED_INTERVALS = 8;
/** Tokens arriving with less than this between them come from one engine step. */
const TICK_GAP_MS = 4;
/** Steps seen before their durations are predicted from their prefills. */
const MIN_STEP_OBSERVATIONS = 50;
/** A gap between steps longer than this is idle time, not a step. */
const MAX_STEP_MS = 2000;

const zeroWork = (): Work => ({ prefill: 0, decode: 0, decodeKvK: 0 });
const plus = (a: Work, b: Work): Work => ({ prefill: a.prefill + b.prefill, decode: a.decode + b.decode, decodeKvK: a.decodeKvK + b.decodeKvK });

/**
 * Splits each GPU group's measured energy among the requests it serves. Between two readings of
 * the group's energy counters (every `sampleMs`, and whenever a request ends) the interval's
 * energy goes to the requests in flight by their share of the interval's work, step by step: the
 * gateway sees each engine step as the tokens that stream out together (a request's prompt at its
 * first token, its prefill; then one output token per step, weighted by the KV it reads), and a
 * step's energy is its busy time at busy power plus its tokens' energy, shared by the step's
 * requests by their tokens' energy. Busy and idle power and the energy of a prompt token, an output
 * token and a KV read come from a non-negative least-squares fit of interval energy against
 * interval busy time, idle time and work over the group's recent intervals, so they follow the
 * model and GPU the group runs; the modelled shares then divide the measured energy. Intervals with
 * requests waiting for their first token carry their energy to the next. An unstreamed answer shows
 * no tokens: it is given the mean work of the streamed requests beside it, and its receipt says
 * "estimated". Energy of idle intervals belongs to no request.
 *
 * @example
 * const meter = new EnergyMeter({ energyJ: (gpu) => gpus.totalEnergyJ(gpu) });
 * const m = meter.begin([0, 1], 812, true);
 * m.token(); // first token: the prefill of 812 prompt tokens
 * const receipt = await m.finish(64); // { energyJ: 93.1, source: "measured" }
 */
export class EnergyMeter {
  private readonly groups = new Map<string, Group>();
  private readonly now: () => number;
  private readonly timer: NodeJS.Timeout;
  private readonly sampleMs: number;

  constructor(private readonly o: EnergyMeterOptions) {
    this.now = o.nowMs ?? (() => performance.now());
    this.sampleMs = o.sampleMs ?? 200;
    this.timer = setInterval(() => this.sampleAll(), this.sampleMs).unref();
  }

  /** Starts following a request sent to the replica on `gpus`. */
  begin(gpus: readonly number[], promptTokens: number, streams: boolean): MeteredRequest {
    const group = this.group(gpus);
    const entry: Entry = { beganMs: this.now(), promptTokens: Math.max(0, promptTokens), streams, tokens: 0, energyJ: 0, ended: false, failed: false };
    // The group's idle time ends now: that interval is no request's.
    if (!group.last || group.open.size === 0) void this.close(group, true);
    group.open.add(entry);
    if (!streams) this.work(group, entry, { prefill: entry.promptTokens, decode: 0, decodeKvK: 0 });
    return {
      token: (count = 1) => this.token(group, entry, count),
      finish: async (completionTokens) => {
        if (completionTokens !== undefined && entry.streams && completionTokens > entry.tokens) this.token(group, entry, completionTokens - entry.tokens);
        entry.ended = true;
        await this.stepEnd(group);
        await this.close(group);
        return entry.failed ? undefined : { energyJ: entry.energyJ, source: entry.streams ? "measured" : "estimated" };
      },
      abandon: () => void (entry.ended = true),
    };
  }

  /** Stops the periodic readings. */
  stop(): void {
    clearInterval(this.timer);
  }

  /** The energy model of a GPU group now: the fit's, or the defaults before it has data. */
  weightsOf(gpus: readonly number[]): WorkWeights {
    const fit = this.groups.get(gpus.join(","))?.fit;
    if (!fit || fit.observations < MIN_FITTED_INTERVALS) return DEFAULT_WEIGHTS;
    const [busyW, idleW, prefill, decode, decodeKvK] = fit.solve() as [number, number, number, number, number];
    return prefill + decode + decodeKvK > 0 ? { busyW, idleW, prefill, decode, decodeKvK } : { ...DEFAULT_WEIGHTS, busyW, idleW };
  }

  private token(group: Group, entry: Entry, count: number): void {
    if (entry.ended || !entry.streams || !(count > 0)) return;
    const work = zeroWork();
    if (entry.tokens === 0) {
      work.prefill = entry.promptTokens;
      count--;
      entry.tokens = 1;
    }
    const context = entry.promptTokens + entry.tokens;
    work.decode = count;
    work.decodeKvK = (count * (context + (count - 1) / 2)) / 1000;
    entry.tokens += count;
    this.work(group, entry, work);
  }

  /** Books `work` of `entry` in the step whose tokens arrive now. */
  private work(group: Group, entry: Entry, work: Work): void {
    const t = this.now();
    let tick = group.ticks.at(-1);
    // A step gives each request in it one token, so a second token of a request begins the next step; so does a
    // pause longer than half a step (the next step's new requests alone). Arrival jitter below that splits no step.
    if (!tick || t - tick.lastMs > this.pauseMs(group) || tick.work.has(entry)) group.ticks.push((tick = { tMs: t, lastMs: t, work: new Map() }));
    tick.lastMs = t;
    tick.work.set(entry, work);
    // Intervals end just after a step's tokens (this turn's I/O read first), so a step's energy and its work share one interval.
    if (group.last && t - group.last.tMs >= this.sampleMs && !group.closeSoon) {
      group.closeSoon = true;
      void this.stepEnd(group).then(() => this.close(group));
    }
  }

  /**
   * Resolves once the step whose tokens are arriving has all of them: every request that made a
   * token in the step before (and has not ended) has made one in this one, or the tokens paused
   * for longer than a step's tokens do. Its energy is then in the counters and its work in the interval.
   */
  private async stepEnd(group: Group): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    const tick = group.ticks.at(-1);
    if (!tick) return;
    const previous = group.ticks.at(-2);
    const expected = previous ? [...previous.work.keys()] : [...group.open].filter((e) => e.tokens > 1);
    while (group.ticks.at(-1) === tick && this.now() - tick.lastMs <= this.pauseMs(group) && !expected.every((e) => e.ended || tick.work.has(e))) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }

  /** A pause in tokens longer than this ends a step: half a step's usual duration, at least TICK_GAP_MS. */
  private pauseMs(group: Group): number {
    return Math.max(TICK_GAP_MS, group.stepFit.observations >= MIN_STEP_OBSERVATIONS ? (group.stepFit.solve()[0]! * 1e3) / 2 : 0);
  }

  private group(gpus: readonly number[]): Group {
    const key = gpus.join(",");
    let group = this.groups.get(key);
    if (!group) {
      group = { gpus: [...gpus], last: undefined, open: new Set(), ticks: [], lastTickMs: undefined, carryJ: 0, stepFit: new DecayedNnls(2, 0.999), closeSoon: false, fit: new DecayedNnls(5, 0.995), chain: Promise.resolve() };
      this.groups.set(key, group);
    }
    return group;
  }

  /** Idle groups are read on the clock (their intervals teach the fit idle power), busy ones once steps stop coming for a while. */
  private sampleAll(): void {
    const now = this.now();
    for (const group of this.groups.values()) if (group.last && (group.open.size === 0 || now - group.last.tMs >= 4 * this.sampleMs)) void this.close(group);
  }

  /** Ends the group's current interval: reads its counters, splits the energy, drops requests that ended. */
  private close(group: Group, idle = false): Promise<void> {
    const run = async () => {
      group.closeSoon = false;
      const entries = idle ? [] : [...group.open];
      const ticks = group.ticks;
      group.ticks = [];
      const tMs = this.now();
      let energyJ: number;
      try {
        energyJ = (await Promise.all(group.gpus.map((g) => this.o.energyJ(g)))).reduce((a, b) => a + b, 0);
      } catch {
        for (const e of entries) e.failed = true;
        group.ticks = [...ticks, ...group.ticks];
        return this.retire(group, entries);
      }
      const last = group.last;
      group.last = { tMs, energyJ };
      if (last) this.split(group, entries, ticks, Math.max(0, energyJ - last.energyJ), last.tMs, tMs);
      this.retire(group, entries);
    };
    group.chain = group.chain.then(run, run);
    return group.chain;
  }

  /** Shares the interval's energy among `entries` by the modelled energy of their work in each step. */
  private split(group: Group, entries: Entry[], ticks: Tick[], deltaJ: number, fromMs: number, toMs: number): void {
    const w = this.weightsOf(group.gpus);
    const value = (x: Work) => w.prefill * x.prefill + w.decode * x.decode + w.decodeKvK * x.decodeKvK;
    const steps = ticks.map((tick) => {
      const since = Math.max(fromMs, group.lastTickMs ?? -Infinity, Math.min(...[...tick.work.keys()].map((e) => e.beganMs)));
      group.lastTickMs = tick.tMs;
      const stepMs = tick.tMs - since;
      const measuredS = stepMs > 0 && stepMs <= MAX_STEP_MS ? stepMs / 1e3 : 0;
      const prefillK = [...tick.work.values()].reduce((n, x) => n + x.prefill, 0) / 1000;
      if (measuredS > 0) group.stepFit.add([1, prefillK], measuredS);
      return { tick, measuredS, prefillK };
    });
    // A step's busy energy follows its duration, which the gateway sees only through when its tokens
    // arrive (jittered by its own load): once known, a step's duration is predicted from its prefill instead.
    const [stepBaseS, stepPerKPrefillS] = group.stepFit.observations >= MIN_STEP_OBSERVATIONS ? group.stepFit.solve() : [undefined, undefined];
    const stepS = (step: (typeof steps)[number]) => (stepBaseS === undefined ? step.measuredS : stepBaseS + stepPerKPrefillS! * step.prefillK);
    const busyS = steps.reduce((s, x) => s + x.measuredS, 0);
    const idleS = Math.max(0, (toMs - fromMs) / 1e3 - busyS);
    const total = ticks.reduce((t, tick) => [...tick.work.values()].reduce(plus, t), zeroWork());
    if (entries.every((e) => e.streams)) group.fit.add([busyS, idleS, total.prefill, total.decode, total.decodeKvK], deltaJ);
    if (entries.length === 0) return void (group.carryJ = 0);
    const model = new Map<Entry, number>();
    for (const step of steps) {
      const { tick } = step;
      const streamed = [...tick.work].filter(([e]) => e.streams);
      const streamedValue = streamed.reduce((s, [, x]) => s + value(x), 0);
      // An unstreamed answer in flight is assumed to work as hard as the streamed ones in the step.
      const assumed = streamed.length > 0 ? streamedValue / streamed.length : 0;
      const shares = entries.map((e) => value(tick.work.get(e) ?? zeroWork()) + (e.streams ? 0 : assumed));
      const sum = shares.reduce((a, b) => a + b, 0);
      if (sum <= 0) continue;
      const stepJ = w.busyW * stepS(step) + sum;
      entries.forEach((e, i) => model.set(e, (model.get(e) ?? 0) + (stepJ * shares[i]!) / sum));
    }
    const modelled = [...model.values()].reduce((a, b) => a + b, 0);
    if (modelled <= 0) {
      const energy = deltaJ + group.carryJ;
      return void (group.carryJ = entries.some((e) => !e.streams) ? this.evenly(entries, energy) : energy);
    }
    // The interval's idle time (before its first request began, say) is no request's: its modelled share stays out.
    const energy = (deltaJ * modelled) / (modelled + w.idleW * idleS) + group.carryJ;
    group.carryJ = 0;
    for (const [e, m] of model) e.energyJ += (energy * m) / modelled;
  }

  /** Gives `energy` to the entries in equal parts (unstreamed answers alone in flight); nothing is left to carry. */
  private evenly(entries: Entry[], energy: number): number {
    for (const e of entries) e.energyJ += energy / entries.length;
    return 0;
  }

  private retire(group: Group, entries: readonly Entry[]): void {
    for (const e of entries) if (e.ended) group.open.delete(e);
  }
}
