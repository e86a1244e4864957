import { describe, expect, it } from "vitest";
import type { ClassId } from "../../schemas/ids.ts";
import { SimSiteGateway } from "./sim-site-gateway.ts";
import { TEST_LLM, testPlan, testReplicas } from "./request-fleet.test-helper.ts";

const SS = "SS" as ClassId;

describe("the per-request simulator's site gateway", () => {
  it("join-idle: sends a request whose entry has requests waiting at every replica to a replica with none of its class, else of its model; only under that balance", () => {
    const replicas = testReplicas();
    // a and b serve SS; c is planned for no class.
    replicas.install(testPlan(1, ["a", "b", "c"], ["a", "b"]), 0, true);
    const gateway = new SimSiteGateway("dc", replicas, { replicaConcurrency: 64, queueMax: 100, queueWaitMs: 10_000 });
    const [a, b, c] = ["a", "b", "c"].map((id) => replicas.entries.get(`dc/${id}`)!.replicas[0]!);
    a!.engine.enqueue(0, 0); // waits for admission until the engine steps
    expect(gateway.resolve("dc/a", SS, TEST_LLM.id, 0)).toEqual({ group: "dc/a", replicas: [a] });

    replicas.install(testPlan(2, ["a", "b", "c"], ["a", "b"], { balance: "join-idle" }), 0, false);
    expect(gateway.resolve("dc/a", SS, TEST_LLM.id, 0)).toEqual({ group: "idle:SS", replicas: [b] });
    b!.engine.enqueue(1, 0);
    expect(gateway.resolve("dc/a", SS, TEST_LLM.id, 0)).toEqual({ group: `idle:${TEST_LLM.id}`, replicas: [c] });
    c!.engine.enqueue(2, 0);
    expect(gateway.resolve("dc/a", SS, TEST_LLM.id, 0)).toEqual({ group: "dc/a", replicas: [a] });
  });

  it("orders its queue as the plan in force asks: least laxity first lets a short request overtake a long one, FIFO where the plan says nothing", () => {
    const replicas = testReplicas();
    const gateway = new SimSiteGateway("dc", replicas, { replicaConcurrency: 64, queueMax: 100, queueWaitMs: 60_000 });
    const held = (id: number, arrivalMs: number, isolatedMs: number) => ({ id, arrivalMs, isolatedMs, entryKey: "dc/a", classId: SS });
    gateway.hold(held(1, 0, 20_000)); // long, first
    gateway.hold(held(2, 100, 500)); // short, later
    const order = () => gateway.queue.order(1_000).map((r) => r.id);
    replicas.install(testPlan(1, ["a"], ["a"], { queue: "llf" }), 0, true);
    gateway.followPlan();
    expect(order()).toEqual([2, 1]);
    replicas.install(testPlan(2, ["a"]), 0, false);
    gateway.followPlan();
    expect(order()).toEqual([1, 2]);
  });
});
