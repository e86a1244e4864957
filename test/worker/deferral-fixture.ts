import { env } from "cloudflare:test";
import { vi } from "vitest";
import type { ProfileRow } from "../../src/core/schemas/profile.ts";
import { Edge, MODEL } from "./edge-fixture.ts";

/**
 * Slot 0 of the deferral grid the tests run on: a multiple of DEFERRAL_SLOT_S (900 s), so slots
 * start on it, and in the future, so alarms the objects set at the mocked time wait for the test.
 */
export const T0 = Date.UTC(2030, 0, 7, 12, 0);
export const SLOT_MS = 900_000;
const CLASSES = ["SS", "SL", "LS", "LL"] as const;

/**
 * Two grid sites: "solar" (its intensity comes from a carbon forecast; `setUpDeferral` posts one)
 * and "steady" (a fixed 300 g/kWh). Each has 8 H100s, one TP1 instance planned at a tenth of
 * what it serves, and every class routed to both.
 */
export function deferralFleet() {
  const site = (id: string, carbon: object) => ({ id, region: "r", ingressUrl: `https://${id}.sites.test/`, gpus: [{ type: "H100-80GB", count: 8 }], power: { kind: "grid", region: "r", capW: 20_000 }, carbon, rttMs: {} });
  return {
    sites: [site("solar", { kind: "electricitymaps", zone: "US-CAL-CISO" }), site("steady", { kind: "fixed", gPerKwh: 300 })],
    models: [{ id: MODEL }],
    variants: [{ model: MODEL, id: "base", quality: 1, memoryGb: 16, parameterCount: 8e9 }],
    classScheme: { name: "2x2", inputEdges: [512], outputEdges: [256], inputLabels: ["S", "L"], outputLabels: ["S", "L"] },
    classes: CLASSES.map((id, i) => ({ id, inputBin: i >> 1, outputBin: i & 1, slo: { ttftMs: 300, tbtMs: 80 } })),
    policy: { kind: "greenference", weights: { carbon: 1 } },
  };
}

/** The profile: each class at TP1 and 1410 MHz, stable up to 4 req/s (600 W there). Formula, not measured. */
export function deferralProfile() {
  const rows: ProfileRow[] = [];
  const lat = { p50: 50, p99: 100 };
  for (const classId of CLASSES) for (const [loadRps, power] of [[1, 300], [4, 600]] as const) rows.push({ model: MODEL, variant: "base", gpu: "H100-80GB", tp: 1, mhz: 1410, classId: classId as never, loadRps, ttftMs: lat, tbtMs: lat, e2eMs: lat, peakPowerW: power + 50, avgPowerW: power, energyPerRequestJ: power / loadRps, stable: true });
  return { version: 1, source: { kind: "virtual", details: { note: "formula, test only" } }, rows };
}

export function deferralPlan(version: number) {
  const entry = { id: "i0", model: MODEL, variant: "base", tp: 1, gpus: [0], clock: { mode: "locked", mhz: 1410 }, loadRps: { SS: 0.4 } };
  return {
    version,
    createdAtMs: T0 - 60_000,
    validUntilMs: T0 + 86_400_000,
    policy: "greenference",
    sites: ["solar", "steady"].map((site) => ({ site, powerCapW: 20_000, instances: [entry] })),
    routing: Object.fromEntries(CLASSES.map((c) => [c, [{ site: "solar", instance: "i0", weight: 1 }, { site: "steady", instance: "i0", weight: 1 }]])),
  };
}

/** The edge's clock (and every Durable Object's) at `ms`. */
export function clockAt(ms: number): void {
  vi.spyOn(Date, "now").mockReturnValue(ms);
}

/** A heartbeat from each site at the mocked time, its instance ready with `waiting` requests queued. */
export async function heartbeats(waiting = 0): Promise<void> {
  for (const site of ["solar", "steady"]) {
    await env.SITE.get(env.SITE.idFromName(site)).heartbeat({
      site,
      sentAtMs: Date.now(),
      appliedPlanVersion: 1,
      sitePowerW: 2_000,
      gpus: [{ index: 0, type: "H100-80GB", powerW: 300, energyMj: 1e6, smClockMhz: 1410, lockedClockMhz: 1410, health: "ok" }],
      instances: [{ id: "i0", state: "ready", waiting, running: 1, kvUse: 0.3 }],
    });
  }
}

/** The "solar" site's intensity per slot from T0 unless told otherwise: 500 g/kWh now, 60 from the next slot on. */
export const SOLAR_LATER = [500, 60, 60, 60, 60, 60, 60, 60];

/**
 * The deferral fleet in ControlDO at T0 + `intoMs`: fleet, profile, a plan, heartbeats, ingress
 * secrets and the "solar" site's carbon forecast per slot from T0 (the last value holds after).
 */
export async function setUpDeferral(edge: Edge, version: number, o: { intoMs?: number; solar?: number[] } = {}): Promise<void> {
  const intoMs = o.intoMs ?? 1_000;
  clockAt(T0 + intoMs);
  const ok = async (r: Promise<Response>) => {
    const got = await r;
    if (!got.ok) throw new Error(`setup call failed: ${got.status} ${await got.text()}`);
  };
  await ok(edge.admin("PUT", "/admin/v1/fleet", deferralFleet()));
  await ok(edge.admin("PUT", "/admin/v1/profile", deferralProfile()));
  await ok(edge.admin("PUT", "/admin/v1/plan", deferralPlan(version)));
  const carbon = (o.solar ?? SOLAR_LATER).map((value, k) => ({ tMs: T0 + k * SLOT_MS, value }));
  await ok(edge.admin("POST", "/admin/v1/forecasts", { kind: "carbon_average", unit: "gCO2/kWh", source: "test", issuedAtMs: T0, subject: { kind: "site", id: "solar" }, points: carbon }));
  await heartbeats();
  for (const site of ["solar", "steady"]) await edge.issueIngressSecret(site, 0);
  edge.app.context.cache.invalidate();
}
