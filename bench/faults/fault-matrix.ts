import { existsSync } from "node:fs";
import type { LocalStack, StackSiteHandle } from "../../lib/stack/local-stack.ts";
import { setWeightedPlan, waitFor } from "../../lib/stack/weighted-plan.ts";
import { POWER_LADDER_STEPS, type PowerLadderStep } from "../../host-agent/controllers/power-ladder.ts";
import { StallProxy } from "./stall-proxy.ts";
import { busiestNow, failoverOf, planForTraffic, servedAt } from "./traffic-plan.ts";
import { faultRow, Traffic, type FaultRow } from "./traffic.ts";

/** The site the stall, the restarts and the clock skews hit; the other two carry on. */
export const VICTIM = "wind-erco";
/** Where the stall's plan keeps its standby. */
const STANDBY = "grid-ciso";
const ALL = { "wind-bpat": 1, "wind-erco": 1, "grid-ciso": 1 };
/** Where Debian's faketime package puts libfaketime (the clock-skew faults run the agent under it). */
const LIBFAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
/** The matrix's traffic: one request every 100 ms, 40 prompt tokens. */
const TRAFFIC = { intervalMs: 100, inputTokens: 40 };
/** Output tokens of the kill's answers (long, so the kill lands mid-stream). */
const KILL_OUTPUT_TOKENS = 400;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface MatrixOptions {
  /** Seconds of traffic before and after each fault. */
  beforeS: number;
  afterS: number;
  log: (line: string) => void;
}

/** Runs every fault on the local stack, one after the other, each healed before the next. */
export async function runFaultMatrix(stack: LocalStack, o: MatrixOptions): Promise<FaultRow[]> {
  const victim = siteHandle(stack, VICTIM);
  const rows: FaultRow[] = [];
  const traffic = (stream: (i: number) => boolean, outputTokens: number) => new Traffic(stack.load!, { ...TRAFFIC, outputTokens, stream }).start();
  /** Traffic for beforeS, the fault, traffic for afterS; the row of that window. */
  const measure = async (name: string, inject: () => Promise<string | void>, stream: (i: number) => boolean = (i) => i % 2 === 0, outputTokens = 48) => {
    o.log(`fault: ${name}`);
    const t = traffic(stream, outputTokens);
    await sleep(o.beforeS * 1000);
    const faultAtMs = Date.now();
    const note = await inject();
    const remaining = o.afterS * 1000 - (Date.now() - faultAtMs);
    if (remaining > 0) await sleep(remaining);
    const row = faultRow(name, await t.stop(), faultAtMs, t.devProxyRetries, note || undefined);
    o.log(`  ${JSON.stringify(row)}`);
    rows.push(row);
  };
  const healthy = () => waitFor(async () => (await stack.admin<{ health: { healthy: boolean } }[]>("GET", "/admin/v1/sites")).every((s) => s.health.healthy), 60_000, "every site healthy");

  // The stall first, while the edge holds no site as failing (a site that failed a request is
  // passed over for a while, so the stall would not be met): the plan routes every request to the
  // victim, with a standby at another site. Each request meets the stall until the edge's idle
  // timeout ends it; routing then fails over to the standby.
  await setWeightedPlan(stack, { [VICTIM]: 1 }, { standby: [STANDBY] });
  await servedAt(stack, VICTIM);
  const proxy = await StallProxy.start(victim.ingressUrl);
  try {
    await pointFleetAt(stack, VICTIM, proxy.url);
    await servedAt(stack, VICTIM, () => proxy.forwarded > 0);
    await measure("site stalls after the response head", async () => {
      proxy.stalling = true;
      return `${VICTIM}'s answers stop after their head (the plan routes every request there; standby at ${STANDBY}); the edge's idle timeout is ${stack.config.siteIdleTimeoutS} s`;
    });
  } finally {
    proxy.stalling = false;
    await pointFleetAt(stack, VICTIM, victim.ingressUrl);
    await proxy.close();
  }

  // The kill on the fleet planner's own plan for the matrix's traffic (standby setting on): the
  // agent of the site with the most requests in flight dies mid-stream.
  const { plan } = await planForTraffic(stack, { inputTokens: TRAFFIC.inputTokens, outputTokens: KILL_OUTPUT_TOKENS }, 1000 / TRAFFIC.intervalMs);
  let killed = victim;
  await measure("agent SIGKILLed mid-stream", async () => {
    const busiest = await busiestNow(stack);
    killed = busiest.site;
    killed.process!.killNow();
    return `SIGKILL to the agent of ${killed.site.id} (its engines with it), the site with the most requests in flight (${busiest.inFlight}; ${KILL_OUTPUT_TOKENS}-token answers, half of them streamed), on plan ${plan.version} (${plan.policy}); failover: ${failoverOf(plan, killed.site.id, stack.config.model)}`;
  }, undefined, KILL_OUTPUT_TOKENS);
  await restart(stack, killed);
  await healthy();
  await setWeightedPlan(stack, ALL);

  for (const rung of POWER_LADDER_STEPS) {
    await measure(`agent restarted at power-ladder rung ${rung}`, async () => {
      // A power cap far under the site's idle draw: the ladder climbs a rung a check (a second), so
      // the rung is watched while the plan goes out and the agent is killed the moment it stands on it.
      const planned = rung === "none" ? Promise.resolve() : setWeightedPlan(stack, ALL, { powerCapW: { [VICTIM]: 200 } }).then(() => undefined);
      await waitForRung(victim, rung);
      victim.process!.killNow();
      const killedAt = Date.now();
      await restart(stack, victim);
      await planned;
      return `SIGKILL on rung ${rung}; agent back in ${((Date.now() - killedAt) / 1000).toFixed(1)} s`;
    });
    await setWeightedPlan(stack, ALL);
    await healthy();
  }

  for (const mode of ["failing", "hanging"] as const) {
    await measure(`carbon provider ${mode === "failing" ? "down (HTTP 500)" : "hanging"}`, async () => {
      stack.carbon![mode] = true;
      try {
        const v0 = (await stack.admin<{ version: number }>("GET", "/admin/v1/plan")).version;
        await stack.cron("*/5 * * * *");
        await stack.replan();
        const history = await stack.admin<{ cronRuns: Record<string, { message?: string }[]> }>("GET", "/admin/v1/history");
        const v1 = (await stack.admin<{ version: number }>("GET", "/admin/v1/plan")).version;
        return `forecast refresh: ${(history.cronRuns["forecast-refresh"]?.[0]?.message ?? "").slice(0, 160)}; plan ${v0} -> ${v1}`;
      } finally {
        stack.carbon![mode] = false;
      }
    });
  }
  await setWeightedPlan(stack, ALL);

  for (const skew of ["+1h", "-1h"]) {
    await measure(`clock skew: site ${skew === "+1h" ? "an hour ahead of" : "an hour behind"} the edge`, async () => {
      victim.process!.killNow();
      await restart(stack, victim, skewedClock(skew));
      return `${VICTIM}'s agent restarted with its clock ${skew} (${existsSync(LIBFAKETIME) ? "libfaketime" : "a Date.now shift preloaded into node"})`;
    });
    victim.process!.killNow();
    await restart(stack, victim);
    await healthy();
  }
  return rows;
}

function siteHandle(stack: LocalStack, id: string): StackSiteHandle {
  const handle = stack.sites.find((s) => s.site.id === id);
  if (!handle) throw new Error(`no site ${id} in the stack`);
  return handle;
}

async function restart(stack: LocalStack, victim: StackSiteHandle, env: Record<string, string> = {}): Promise<void> {
  await victim.process!.stop(5_000);
  await stack.startAgent(victim, env);
}

/** The environment that runs an agent with its wall clock moved by `offset` ("+1h", "-1h"), monotonic time untouched. */
function skewedClock(offset: string): Record<string, string> {
  if (existsSync(LIBFAKETIME)) return { LD_PRELOAD: LIBFAKETIME, FAKETIME: offset, DONT_FAKE_MONOTONIC: "1" };
  const ms = (offset.startsWith("-") ? -1 : 1) * 3_600_000;
  const preload = `const n = Date.now; Date.now = () => n() + ${ms};`;
  return { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=data:text/javascript,${encodeURIComponent(preload)}` };
}

/** Waits (polling every 25 ms: a rung may last one ladder check) until the site's power ladder stands on `rung`, as its local API says. */
async function waitForRung(site: StackSiteHandle, rung: PowerLadderStep): Promise<void> {
  const step = async () => ((await (await fetch(`${site.localApiUrl}/v1/status`, { headers: { authorization: `Bearer ${site.readToken}` } })).json()) as { controllers: { powerLadder: { step: PowerLadderStep } } }).controllers.powerLadder.step;
  const deadline = Date.now() + 30_000;
  while ((await step()) !== rung) {
    if (Date.now() > deadline) throw new Error(`${site.site.id} did not reach power-ladder rung ${rung} within 30 s`);
    await sleep(25);
  }
}

/** Points the fleet's ingress URL for `site` at `url` (the edge routes there from its next snapshot). */
async function pointFleetAt(stack: LocalStack, site: string, url: string): Promise<void> {
  const fleet = await stack.admin<{ sites: { id: string; ingressUrl: string }[] }>("GET", "/admin/v1/fleet");
  await stack.admin("PUT", "/admin/v1/fleet", { ...fleet, sites: fleet.sites.map((s) => (s.id === site ? { ...s, ingressUrl: url } : s)) });
}
