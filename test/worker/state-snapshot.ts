import { env, runInDurableObject } from "cloudflare:test";
import { controlStub } from "../../durable-objects/control-do.ts";
import { telemetry } from "./edge-fixture.ts";

/** Keys that change with time or traffic whatever a request says: request counters (refused ones count too) and the alarm's table of due times. */
const CLOCKWORK = new Set(["metrics", "timers"]);

/** Everything a Durable Object holds in storage but CLOCKWORK, as one text (keys in order). */
async function storageText(stub: DurableObjectStub): Promise<string> {
  return runInDurableObject(stub, async (_instance, state) => JSON.stringify([...(await state.storage.list()).entries()].filter(([key]) => !CLOCKWORK.has(key))));
}

/**
 * The state a refused request must not touch: ControlDO's whole storage (fleet, plan and its
 * history, generation, keys, ingress secrets, forecasts) and that of the named sites'
 * SiteDOs (token hash, telemetry, health).
 */
export async function edgeState(sites: string[]): Promise<string> {
  const parts = [await storageText(controlStub(env) as unknown as DurableObjectStub)];
  for (const site of sites) parts.push(await storageText(env.SITE.get(env.SITE.idFromName(site)) as unknown as DurableObjectStub));
  return parts.join("\n");
}

/** The storage keys whose values differ between two `edgeState` texts (for a failure's message). */
export function changedKeys(before: string, after: string): string[] {
  const objects = (text: string) => text.split("\n").map((line) => new Map((JSON.parse(line) as [string, unknown][]).map(([k, v]) => [k, JSON.stringify(v)])));
  const [a, b] = [objects(before), objects(after)];
  return a.flatMap((map, i) => [...new Set([...map.keys(), ...b[i]!.keys()])].filter((k) => map.get(k) !== b[i]!.get(k)).map((k) => `${i === 0 ? "ControlDO" : "SiteDO"}:${k}`));
}

/**
 * Heartbeats from `sites` as their agents would send them, at most every `everyMs` of wall time:
 * a check that runs past HEARTBEAT_TIMEOUT_S would otherwise see a site time out (SiteDO's alarm
 * reporting it to ControlDO) in the middle of some request, a change time made and no request did.
 * `beat()` answers whether it sent them (the caller then takes its state snapshot again).
 */
export function siteHeartbeats(sites: string[], everyMs = 2_000): { beat(): Promise<boolean> } {
  let lastMs = Date.now();
  return {
    async beat() {
      if (Date.now() - lastMs < everyMs) return false;
      for (const site of sites) await env.SITE.get(env.SITE.idFromName(site)).heartbeat(telemetry(site));
      lastMs = Date.now();
      return true;
    },
  };
}
