import { interpolateAtLoad } from "../../profiling/profile-lookup.ts";
import type { ProfileRow } from "../../schemas/profile.ts";
import type { Slo } from "../../schemas/request-class.ts";
import type { Eq1Option } from "./eq1.ts";
import { meetsSlo } from "../slo.ts";

/** One class an instance serves: its profile rows at the instance's (GPU, TP, clock), its load per instance and its own SLO. */
export interface MixPart {
  rows: readonly ProfileRow[];
  loadRps: number;
  /** Without one, the class's load counts but its latency is not checked. */
  slo?: Slo;
}

/** An instance at one clock under a mixed load. */
export interface MixPoint {
  /** Share of the instance's throughput in use: sum over classes of load / capacity. */
  utilisation: number;
  /** Every class's p99 TTFT/TBT (and E2E where set), read at that utilisation, is within its own SLO. */
  meetsSlo: boolean;
  /** Average GPU power, W: each class's draw at that utilisation, weighted by its share of it. */
  powerW: number;
}

/**
 * What one instance serving several request types at one (GPU, TP, clock) does, from the per-class
 * profiles: each class takes `load / capacity` of the instance (capacity: its highest stable
 * profiled load, the profile's maximum throughput), and every class runs as on its own curve at
 * the instance's total utilisation, the reading the fleet simulator uses. DynamoLLM (§IV-B
 * "Handling fragmentation") forwards load of small request types to larger pools; Eq. (1)'s
 * constraint Performance(L) <= SLO and the instance manager's filter then hold only if every
 * request type a pool serves meets its own SLO (Table IV) at the pool's configuration.
 * One class alone reads its curve at its load.
 *
 * @example
 * mixedLoad([{ rows: llAtTp4At1200, loadRps: 0.3, slo: sloLL }, { rows: msAtTp4At1200, loadRps: 0.4, slo: sloMS }]);
 * // { utilisation: 0.3 / capLL + 0.4 / capMS, meetsSlo: both within their SLOs there, powerW }
 */
export function mixedLoad(parts: readonly MixPart[]): MixPoint {
  const loaded = parts.filter((p) => p.loadRps > 0);
  // Nothing to serve: the idle-most reading of every class (its lowest profiled load).
  const read = loaded.length > 0 ? loaded : parts.map((p) => ({ ...p, loadRps: 0 }));
  const caps = read.map((p) => curveOf(p.rows).capacity);
  const weights = read.map((p, i) => (caps[i]! > 0 ? p.loadRps / caps[i]! : Infinity));
  const u = weights.reduce((a, b) => a + b, 0);
  let meets = Number.isFinite(u);
  let powerW = 0;
  read.forEach((p, i) => {
    const load = Number.isFinite(u) ? u * caps[i]! : p.loadRps;
    const { highest, sorted } = curveOf(p.rows);
    const at = interpolateAtLoad(sorted, Math.min(load, highest));
    const tooHigh = load > highest * (1 + 1e-9);
    if (p.slo) meets &&= !tooHigh && meetsSlo(at, p.slo);
    else meets &&= !tooHigh;
    const share = u > 0 && Number.isFinite(u) ? weights[i]! / u : 1 / read.length;
    powerW += share * at.avgPowerW;
  });
  return { utilisation: u, meetsSlo: meets, powerW };
}

/** Highest stable profiled load of a curve; a curve with no stable point: its highest load (it meets no SLO anyway). */
function capacity(rows: readonly ProfileRow[]): number {
  const stable = rows.filter((r) => r.stable && r.loadRps > 0);
  return Math.max(0, ...(stable.length > 0 ? stable : rows).map((r) => r.loadRps));
}

const curves = new WeakMap<readonly ProfileRow[], { capacity: number; highest: number; sorted: ProfileRow[] }>();

/** A curve's capacity, highest load and points by load, once per rows array (the instance managers read the same curves every 5 s). */
function curveOf(rows: readonly ProfileRow[]) {
  let c = curves.get(rows);
  if (!c) curves.set(rows, (c = { capacity: capacity(rows), highest: Math.max(...rows.map((r) => r.loadRps)), sorted: [...rows].sort((a, b) => a.loadRps - b.loadRps) }));
  return c;
}

/** A class of a pool's mix for `mixedOptions`: req/s of it per req/s of the pool's load, and its curve at each TP. */
export interface MixShare {
  perUnit: number;
  slo?: Slo;
  /** The class's profile rows at a TP and the options' clock; empty where it has none. */
  rowsAt: (tp: number) => readonly ProfileRow[];
}

/**
 * Eq. (1) options at one clock for a pool serving a mix of request types: for each TP, the load
 * levels (in the pool's own units, `perUnit` req/s of each class per unit) at which every class's
 * latency is within its own SLO (`mixedLoad`), with the mix's power there. Levels are the
 * utilisations at which any class of the mix was profiled. A pool serving only its own class
 * (perUnit 1) gets its profiled SLO-meeting points, the options a pure pool has.
 *
 * @example
 * mixedOptions([{ perUnit: 0.8, slo: sloLL, rowsAt: (tp) => rowsOf(rows, { tp, mhz: 1980, classId: "LL" }) }, { perUnit: 0.5, slo: sloMS, rowsAt: ... }], [2, 4, 8], 1980);
 */
export function mixedOptions(mix: readonly MixShare[], tps: readonly number[], mhz: number): Eq1Option[] {
  const parts = mix.filter((m) => m.perUnit > 0);
  if (parts.length === 0) return [];
  return tps.flatMap((tp) => {
    const curves = parts.map((m) => ({ ...m, rows: m.rowsAt(tp) }));
    if (curves.some((c) => c.rows.length === 0)) return [];
    const caps = curves.map((c) => capacity(c.rows));
    if (caps.some((cap) => cap <= 0)) return [];
    // Units of pool load one instance serves at utilisation 1.
    const perInstance = 1 / curves.reduce((s, c, i) => s + c.perUnit / caps[i]!, 0);
    const levels = [...new Set(curves.flatMap((c, i) => c.rows.filter((r) => r.loadRps > 0 && r.loadRps <= caps[i]!).map((r) => r.loadRps / caps[i]!)))].sort((a, b) => a - b);
    return levels.flatMap((u) => {
      const units = u * perInstance;
      const at = mixedLoad(curves.map((c) => ({ rows: c.rows, loadRps: units * c.perUnit, ...(c.slo ? { slo: c.slo } : {}) })));
      return at.meetsSlo ? [{ tp, mhz, loadRps: units, powerW: at.powerW }] : [];
    });
  });
}
