import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { controlStub } from "../../durable-objects/control-do.ts";
import { Edge } from "./edge-fixture.ts";
import { sourcesFleet } from "./forecast-fixture.ts";
// Written by `greenference agent profile --model m --perf-model llama3.1-8b --engine-url <a simulated engine>
// --gpu nvml --nvml-library <the fake NVML> --gpus 1 --class-lengths AA=64-256/8-32 --clocks 1410,1980
// --rates 1,2 --requests 8` (test/node/agent-profile.test.ts runs the same command and checks its rows match).
import measured from "./fixtures/measured-profile-m-h100.json";

const load = (rps: number) => ({ kind: "load", unit: "req/s", source: "operator", issuedAtMs: 0, subject: { kind: "class", id: "AA" }, points: [{ tMs: 0, value: rps }] });

describe("a profile measured by the host agent", () => {
  it("is accepted by PUT /admin/v1/profile, and Heron's Planner-L plans the fleet's demand on it", async () => {
    const edge = new Edge();
    await controlStub(env).setFleet(sourcesFleet("heron", { r1: { kind: "fixed", gPerKwh: 50 }, r2: { kind: "fixed", gPerKwh: 300 } }));
    await controlStub(env).putForecasts(load(1.5));
    const put = await edge.admin("PUT", "/admin/v1/profile", measured);
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ rows: 4, source: { kind: "measured" }, models: ["m"], gpus: ["H100-80GB"], tps: [1], classes: ["AA"] });
    const replan = await edge.admin("POST", "/admin/v1/replan");
    expect(replan.status).toBe(200);
    const plan = await controlStub(env).getPlan();
    const instances = plan!.sites.flatMap((s) => s.instances);
    expect(instances.length).toBeGreaterThan(0);
    expect(new Set(instances.map((i) => i.model))).toEqual(new Set(["m"]));
    expect(instances.every((i) => i.clock.mode !== "locked" || [1410, 1980].includes(i.clock.mhz))).toBe(true);
    expect(instances.reduce((sum, i) => sum + (i.loadRps["AA" as never] ?? 0), 0)).toBeGreaterThanOrEqual(1.5 - 1e-6);
  });
});
