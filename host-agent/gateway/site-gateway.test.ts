import { afterEach, describe, expect, it } from "vitest";
import { RequestLog } from "../telemetry/request-log.ts";
import { RequestTracker } from "../telemetry/request-tracker.ts";
import { SimEngineDriver } from "../sim-engine/sim-engine-driver.ts";
import { SimulatedSite } from "../sim-engine/simulated-site.ts";
import { chat, cleanUp, gatewayOver, signedFetch, simEngines, simEnginesAt, SITE, started } from "./gateway.test-helper.ts";
import { answerAfter, latch, launchOf, ScriptedReplica } from "./scripted-replica.test-helper.ts";
import type { SiteGatewayOptions } from "./site-gateway.ts";
import { sliceBody, type InstanceInput } from "../applier/plan-fixtures.test-helper.ts";
import { groupState } from "../applier/instance-state.ts";
import { SitePlanSlice } from "../protocol/plan-slice.ts";
import { handoverReplicas } from "./replica-directory.ts";

afterEach(cleanUp);

describe("site gateway: forwarding", () => {
  it("passes a JSON answer through with the engine's receipt header, and streams SSE chunk by chunk", async () => {
    const engines = await simEnginesAt(1, ["a", 0]);
    const { url } = await gatewayOver(engines, [{ id: "a", gpus: [0] }]);
    const plain = await chat(url, "a");
    expect(plain.status).toBe(200);
    expect(Number(plain.headers.get("x-greenference-energy-j"))).toBeGreaterThan(0);
    expect(plain.headers.get("x-greenference-replica")).toBe("a#0");
    expect(((await plain.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens).toBe(5);

    const t0 = performance.now();
    const stream = await chat(url, "a", { stream: true, max_tokens: 100, stream_options: { include_usage: true } });
    expect(stream.headers.get("content-type")).toBe("text/event-stream");
    const reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    let firstChunkMs = 0;
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      if (text === "") firstChunkMs = performance.now() - t0;
      text += decoder.decode(r.value, { stream: true });
    }
    const totalMs = performance.now() - t0;
    // 100 tokens take over 500 ms of decode in real time; the first arrives after one prefill.
    expect(firstChunkMs).toBeLessThan(totalMs / 2);
    const events = text.split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    expect(events.filter((e) => e.includes('"content"')).length).toBe(100);
    expect(text).toContain('"greenference":{"energy_j"');
  });

  it("sends an instance's requests to its replicas in turn", async () => {
    const engines = await simEngines(["a", 0, 0], ["a", 1, 1], ["b", 0, 2]);
    const { url, metric } = await gatewayOver(engines, [{ id: "a", gpus: [0, 1], replicas: 2, tp: 1 }, { id: "b", gpus: [2] }]);
    const replicas: (string | null)[] = [];
    for (let i = 0; i < 4; i++) replicas.push((await chat(url, "a")).headers.get("x-greenference-replica"));
    expect(replicas).toEqual(["a#0", "a#1", "a#0", "a#1"]);
    expect((await chat(url, "b")).headers.get("x-greenference-replica")).toBe("b#0");
    expect(metric("greenference_gateway_dispatched_total")).toBe(5);
  });

  it("answers /v1/models (signed) with the ready engines' models, /healthz to anyone, and a wrong method with 405 and Allow", async () => {
    const engines = await simEngines(["a", 0, 0], ["b", 0, 1]);
    const { url } = await gatewayOver(engines, [{ id: "a", gpus: [0] }, { id: "b", gpus: [1] }]);
    await engines[1]!.drain(0);
    expect(await (await signedFetch(`${url}/v1/models`)).json()).toEqual({ object: "list", data: [{ id: "llama3.1-8b", object: "model", created: 0, owned_by: "greenference", instances: ["a"] }] });
    expect((await fetch(`${url}/v1/models`)).status).toBe(401);
    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: "ok", site: SITE });
    expect((await fetch(`${url}/v1/embeddings`, { method: "POST" })).status).toBe(404);
    for (const [method, path, allow] of [["DELETE", "/v1/models", "GET"], ["GET", "/v1/chat/completions", "POST"], ["PUT", "/v1/completions", "POST"]] as const) {
      const r = await fetch(`${url}${path}`, { method });
      expect([r.status, r.headers.get("allow")]).toEqual([405, allow]);
    }
  });
});

describe("site gateway: what it measures", () => {
  const tracked = () => {
    const log = new RequestLog();
    return { log, requests: new RequestTracker({ nowMs: () => performance.now(), log }) };
  };
  const sseEvent = (body: unknown) => `data: ${JSON.stringify(body)}\n\n`;

  it("times a streamed answer as its client sees it: TTFT from arrival, mean TBT, usage; a late first token shows while it waits", async () => {
    const gate = latch();
    const engine = await started(
      new ScriptedReplica(launchOf("a"), (_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        void gate.opened.then(async () => {
          for (let k = 0; k < 5; k++) {
            if (k > 0) await new Promise((r) => setTimeout(r, 40));
            res.write(sseEvent({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "t" } }] }));
          }
          res.end(`${sseEvent({ choices: [], usage: { prompt_tokens: 17, completion_tokens: 5 } })}data: [DONE]\n\n`);
        });
      }),
    );
    const { log, requests } = tracked();
    const { url } = await gatewayOver([engine], [{ id: "a", gpus: [0] }], { requests });
    const answer = chat(url, "a", { stream: true }, { headers: { "x-greenference-slo": "ttft=150;tbt=100" } }).then((r) => r.text());
    const waiting = () => requests.inFlightOf("a").find((r) => r.awaitingFirstToken)?.ageMs ?? 0;
    await expect.poll(waiting, { timeout: 2000, interval: 10 }).toBeGreaterThan(150);
    gate.open();
    expect(await answer).toContain("[DONE]");
    await expect.poll(() => log.totals().get("a")?.requests ?? 0).toBe(1);
    const s = log.summary("a", 0, performance.now());
    expect(s.servedRps).toHaveProperty("SM");
    expect(s.ttftMs!.p50).toBeGreaterThan(150);
    expect(s.tbtMs!.p50).toBeGreaterThanOrEqual(35);
    expect(s.tbtMs!.p50).toBeLessThan(100);
    expect(log.totals().get("a")).toMatchObject({ promptTokens: 17, completionTokens: 5, energyJ: 0 });
    // Judged against the SLO the edge sent: its first token came after the 150 ms bound.
    expect(log.sloCounts()).toEqual({ SM: { judged: 1, met: 0 } });
    expect(requests.inFlight).toBe(0);
  });

  it("records an answer sent whole without TTFT, with its energy receipt, and no 4xx answer or refusal", async () => {
    const engine = await started(
      new ScriptedReplica(launchOf("a"), (req, res, seen) => {
        if (seen.body.max_tokens === 1) return void res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "no" } }));
        answerAfter(50)(req, res);
      }),
    );
    const { log, requests } = tracked();
    const { url } = await gatewayOver([engine], [{ id: "a", gpus: [0] }], { requests });
    expect((await chat(url, "a")).status).toBe(200);
    expect((await chat(url, "a", { max_tokens: 1 })).status).toBe(400);
    expect((await chat(url, undefined, { model: "some-other-model" })).status).toBe(404);
    await expect.poll(() => requests.inFlight).toBe(0);
    expect(log.totals().get("a")).toEqual({ requests: 1, energyJ: 1.5, promptTokens: 1, completionTokens: 1 });
    expect(log.summary("a", 0, performance.now()).ttftMs).toBeUndefined();
  });

  it("leaves the logging to an engine that logs its own requests (the simulator), and logs the others' with their receipts", async () => {
    const site = await SimulatedSite.open({ gpuType: "H100-80GB", gpuCount: 2, speed: 20 });
    const own = new RequestLog();
    const selfLogging = await started(new SimEngineDriver({ site, requestLog: own }).create(launchOf("a", 0, 0)));
    const plain = await started(new SimEngineDriver({ site }).create(launchOf("b", 0, 1)));
    const { log, requests } = tracked();
    const { url } = await gatewayOver([selfLogging, plain], [{ id: "a", gpus: [0] }, { id: "b", gpus: [1] }], { requests });
    const slo = { headers: { "x-greenference-slo": "ttft=60000;tbt=60000" } };
    for (const instance of ["a", "b"]) expect(await (await chat(url, instance, { stream: true, stream_options: { include_usage: true } }, slo)).text()).toContain("[DONE]");
    await expect.poll(() => requests.inFlight).toBe(0);
    expect(own.totals().get("a")?.requests).toBe(1);
    expect(log.totals().get("a")).toBeUndefined();
    expect(log.totals().get("b")).toMatchObject({ requests: 1, completionTokens: 5 });
    expect(log.totals().get("b")!.energyJ).toBeGreaterThan(0);
    expect(log.summary("b", 0, performance.now()).ttftMs!.p50).toBeGreaterThan(0);
    // Each request was judged once against the SLO it came with, by whichever logged it.
    expect(own.sloCounts()).toEqual({ SM: { judged: 1, met: 1 } });
    expect(log.sloCounts()).toEqual({ SM: { judged: 1, met: 1 } });
  });
});

describe("site gateway: refusals say why", () => {
  it("refuses bad bodies with 400 in the OpenAI shape", async () => {
    const { url, metric } = await gatewayOver(await simEngines(["a", 0]), [{ id: "a", gpus: [0] }]);
    const notJson = await signedFetch(`${url}/v1/chat/completions`, { method: "POST", body: "{not json", headers: { "content-type": "application/json", "x-greenference-instance": "a" } });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toEqual({ error: { message: "the request body is not valid JSON", type: "invalid_request_error", param: null, code: "invalid_request" } });
    const noModel = await signedFetch(`${url}/v1/completions`, { method: "POST", body: JSON.stringify({ prompt: "x" }), headers: { "content-type": "application/json", "x-greenference-instance": "a" } });
    expect(noModel.status).toBe(400);
    expect(await noModel.json()).toEqual({ error: { message: "invalid request: Invalid input: expected string, received undefined at model", type: "invalid_request_error", param: "model", code: "invalid_request" } });
    expect(metric("greenference_gateway_rejected_total")).toBe(2);
  });

  it("serves an instance the site does not run on a stand-in (the edge may route by a newer plan), and answers 503 when it has none or a drained one has nowhere else to go", async () => {
    const engines = await simEngines(["a", 0, 0], ["b", 0, 1]);
    const { url } = await gatewayOver(engines, [{ id: "a", gpus: [0] }, { id: "b", gpus: [1] }]);
    const unknown = await chat(url, "zzz");
    expect(unknown.status).toBe(200);
    expect(unknown.headers.get("x-greenference-rerouted-reason")).toBe("instance zzz is not in site wind-a's plan (plan 1)");
    await unknown.text();
    const unknownModel = await chat(url, "zzz", { model: "bloom-176b" });
    expect(unknownModel.status).toBe(503);
    expect(await unknownModel.json()).toMatchObject({ error: { code: "instance_not_found", type: "server_error", message: "instance zzz is not in site wind-a's plan (plan 1), and the model `bloom-176b` is not served at site wind-a (plan 1)" } });
    await engines[0]!.drain(0);
    // b runs the same model but the plan does not give it class SM.
    const drained = await chat(url, "a");
    expect(drained.status).toBe(503);
    expect(drained.headers.get("retry-after")).toBe("1");
    const body = (await drained.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("no_replica");
    expect(body.error.message).toMatch(/instance a has no replica accepting requests \(a#0 draining\), and no other instance of llama3\.1-8b at site wind-a serves class SM/);
    const noSuchModel = await chat(url, undefined, { model: "bloom-176b" });
    expect(noSuchModel.status).toBe(404);
    expect(await noSuchModel.json()).toMatchObject({ error: { code: "model_not_found", message: "the model `bloom-176b` is not served at site wind-a (plan 1)" } });
  });

  it("reroutes a drained instance's request to another ready instance of the model that serves the class, and says so", async () => {
    const engines = await simEngines(["a", 0, 0], ["b", 0, 1], ["c", 0, 2]);
    const routing = { SM: [{ site: SITE, instance: "a", weight: 1 }, { site: SITE, instance: "c", weight: 1 }] };
    const { url, metric } = await gatewayOver(engines, [{ id: "a", gpus: [0] }, { id: "b", gpus: [1] }, { id: "c", gpus: [2] }], { routing });
    await engines[0]!.drain(0);
    const response = await chat(url, "a");
    expect(response.status).toBe(200);
    expect(response.headers.get("x-greenference-rerouted")).toBe("c");
    expect(response.headers.get("x-greenference-rerouted-reason")).toMatch(/instance a has no replica accepting requests/);
    expect(response.headers.get("x-greenference-replica")).toBe("c#0");
    expect(metric("greenference_gateway_rerouted_total")).toBe(1);
  });
  it("serves a class on what runs while its planned instance starts (an earlier plan's engine, make-before-break), and says so", async () => {
    const engines = await simEngines(["old", 0, 0]);
    const routing = { SM: [{ site: SITE, instance: "new", weight: 1 }] };
    const { url } = await gatewayOver(engines, [{ id: "new", gpus: [1] }], { routing });
    const response = await chat(url, "new");
    expect(response.status).toBe(200);
    expect(response.headers.get("x-greenference-replica")).toBe("old#0");
    expect(response.headers.get("x-greenference-rerouted-reason")).toBe("instance new is starting: served by old, which plan 1 replaces, until it is up");
    await response.text();
    await engines[0]!.drain(0);
    expect((await chat(url, "new")).status).toBe(503);
  });

  it("serves a starting instance's share on the engines it replaces, not on the class's other instances", async () => {
    const engines = await simEngines(["old", 0, 0], ["c", 0, 2]);
    const routing = { SM: [{ site: SITE, instance: "new", weight: 1 }, { site: SITE, instance: "c", weight: 1 }] };
    const instances = [{ id: "new", gpus: [1] }, { id: "c", gpus: [2] }];
    const { url } = await gatewayOver(engines, instances, { routing });
    const view = { site: SITE, engines: () => engines, slice: () => SitePlanSlice.parse(sliceBody(1, SITE, instances, routing)), instanceState: (id: string) => groupState(engines.filter((e) => e.launch.instanceId === id), true) };
    expect(handoverReplicas(view, "new").map((e) => e.launch.instanceId)).toEqual(["old"]);
    // Only a starting planned instance is covered: not one that runs, nor one the plan does not name.
    expect(handoverReplicas(view, "c")).toEqual([]);
    expect(handoverReplicas(view, "old")).toEqual([]);
    const replicas: (string | null)[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await chat(url, "new");
      replicas.push(response.headers.get("x-greenference-replica"));
      await response.text();
    }
    expect(replicas).toEqual(["old#0", "old#0", "old#0"]);
    // Once the replaced engine is drained, the class's other instance stands in.
    await engines[0]!.drain(0);
    expect(handoverReplicas(view, "new")).toEqual([]);
    expect((await chat(url, "new")).headers.get("x-greenference-replica")).toBe("c#0");
  });

  it("gives no stand-in to an instance whose start failed (the applier gave up on it), and says why", async () => {
    const engines = await simEngines(["old", 0, 0]);
    const routing = { SM: [{ site: SITE, instance: "new", weight: 1 }] };
    const { url } = await gatewayOver(engines, [{ id: "new", gpus: [1] }], { routing, applying: false });
    const response = await chat(url, "new");
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({
      error: { code: "no_replica", message: "instance new has no replica accepting requests (none running: its start failed), and no other instance of llama3.1-8b at site wind-a serves class SM has a replica accepting requests" },
    });
  });

  it("lets an instance planned for another class stand in while the class's instance starts, but not for one that was drained", async () => {
    const engines = await simEngines(["mm", 0, 1]);
    const routing = { SM: [{ site: SITE, instance: "sm", weight: 1 }], MM: [{ site: SITE, instance: "mm", weight: 1 }] };
    const { url } = await gatewayOver(engines, [{ id: "sm", gpus: [0] }, { id: "mm", gpus: [1] }], { routing });
    const response = await chat(url, "sm");
    expect(response.status).toBe(200);
    expect(response.headers.get("x-greenference-replica")).toBe("mm#0");
    await response.text();
    const smEngine = (await simEngines(["sm", 0, 0]))[0]!;
    engines.push(smEngine);
    await smEngine.drain(0);
    expect((await chat(url, "sm")).status).toBe(503);
  });
});

describe("site gateway: faults", () => {
  it("retries once on another replica when one drops the connection before answering", async () => {
    const dead = await started(new ScriptedReplica(launchOf("a", 0), (req) => req.socket.destroy()));
    const live = await started(new ScriptedReplica(launchOf("a", 1), answerAfter(0)));
    const { url, metric } = await gatewayOver([dead, live], [{ id: "a", gpus: [0, 1], replicas: 2, tp: 1 }]);
    const response = await chat(url, "a");
    expect(response.status).toBe(200);
    expect(response.headers.get("x-greenference-replica")).toBe("a#1");
    expect(response.headers.get("x-greenference-energy-j")).toBe("1.5");
    expect([dead.seen.length, live.seen.length]).toEqual([1, 1]);
    expect(metric("greenference_gateway_retries_total")).toBe(1);
  });

  it("answers 502 with every failure when the retry fails too, and 5xx answers count as failures", async () => {
    const dead = await started(new ScriptedReplica(launchOf("a", 0), (req) => req.socket.destroy()));
    const sick = await started(new ScriptedReplica(launchOf("a", 1), (_req, res) => res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "CUDA error: out of memory" } }))));
    const { url } = await gatewayOver([dead, sick], [{ id: "a", gpus: [0, 1], replicas: 2, tp: 1 }]);
    const response = await chat(url, "a");
    expect(response.status).toBe(502);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("upstream_failed");
    expect(error.message).toMatch(/replica a#0 failed before answering: socket hang up; replica a#1 failed before answering: HTTP 500: CUDA error: out of memory/);
  });

  it("ends the client's stream with an error event when the engine dies after answering began (no retry)", async () => {
    const dying = await started(
      new ScriptedReplica(launchOf("a", 0), (req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write('data: {"choices":[{"delta":{"content":"he"}}]}\n\n');
        setTimeout(() => req.socket.destroy(), 30);
      }),
    );
    const spare = await started(new ScriptedReplica(launchOf("a", 1), answerAfter(0)));
    const { url, metric } = await gatewayOver([dying, spare], [{ id: "a", gpus: [0, 1], replicas: 2, tp: 1 }]);
    const response = await chat(url, "a", { stream: true });
    expect(response.status).toBe(200);
    const events = (await response.text()).split("\n\n").filter(Boolean);
    expect(events[0]).toContain('"he"');
    expect(JSON.parse(events[1]!.slice("data: ".length))).toEqual({ error: { message: expect.stringMatching(/^the engine failed mid-response: /), type: "server_error", param: null, code: "upstream_failed" } });
    expect(events).toHaveLength(2);
    await expect.poll(() => metric("greenference_gateway_broken_streams_total"), { timeout: 2000 }).toBe(1);
    expect(spare.seen.length).toBe(0);
  });
});

describe("site gateway: the site queue", () => {
  /** One replica taking one request at a time; it answers only once `gate` is open. */
  async function oneSlot(options: Partial<SiteGatewayOptions> = {}) {
    const gate = latch();
    const replica = await started(new ScriptedReplica(launchOf("a", 0), (req, res) => void gate.opened.then(() => answerAfter(0)(req, res))));
    return { replica, gate, ...(await gatewayOver([replica], [{ id: "a", gpus: [0] }], { replicaConcurrency: 1, ...options })) };
  }

  /** Sends one request that takes the slot, then `maxTokens` ones that must wait, in that order. */
  async function saturate(url: string, replica: ScriptedReplica, metric: (n: string) => number, maxTokens: number[]) {
    const first = chat(url, "a", { max_tokens: 1 });
    await expect.poll(() => replica.seen.length).toBe(1);
    const rest: Promise<Response>[] = [];
    for (const max_tokens of maxTokens) {
      rest.push(chat(url, "a", { max_tokens }));
      await expect.poll(() => metric("greenference_gateway_queue_length")).toBe(rest.length);
    }
    return [first, ...rest];
  }

  it("holds requests beyond the replicas' concurrency and dispatches them FIFO as slots free", async () => {
    const { replica, gate, url, metric } = await oneSlot();
    const all = await saturate(url, replica, metric, [2000, 5, 900]);
    expect(metric("greenference_gateway_requests_in_flight")).toBe(1);
    gate.open();
    const responses = await Promise.all(all);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(replica.seen.map((s) => s.body.max_tokens)).toEqual([1, 2000, 5, 900]);
    const waited = responses.map((r) => Number(r.headers.get("x-greenference-queue-ms")));
    expect(Math.min(...waited.slice(1))).toBeGreaterThan(waited[0]!);
    expect(metric("greenference_gateway_queue_length")).toBe(0);
  });

  it("counts a request in flight at its engine after the applier relabels the engine, so the slot stays taken", async () => {
    const { replica, gate, url, metric } = await oneSlot();
    const first = chat(url, "a", { max_tokens: 1 });
    await expect.poll(() => replica.seen.length).toBe(1);
    // The next plan runs this engine unchanged as replica 1 of the same instance (the applier keeps it).
    replica.relabel("a", 1);
    const second = chat(url, "a", { max_tokens: 2 });
    await expect.poll(() => metric("greenference_gateway_queue_length")).toBe(1);
    expect(replica.seen.length).toBe(1);
    expect(metric("greenference_gateway_requests_in_flight", { replica: "1" })).toBe(1);
    gate.open();
    expect((await Promise.all([first, second])).map((r) => r.status)).toEqual([200, 200]);
    expect(replica.seen.map((s) => s.body.max_tokens)).toEqual([1, 2]);
  });

  it("under LLF dispatches the waiting request with the least laxity first", async () => {
    const { replica, gate, url, metric } = await oneSlot({ scheduler: "llf" });
    const all = await saturate(url, replica, metric, [2000, 5, 900]);
    gate.open();
    await Promise.all(all);
    expect(replica.seen.map((s) => s.body.max_tokens)).toEqual([1, 5, 900, 2000]);
  });

  it("orders its queue as the plan's discipline says, whatever the site's default (FREESH's plans: LLF)", async () => {
    const gate = latch();
    const replica = await started(new ScriptedReplica(launchOf("a", 0), (req, res) => void gate.opened.then(() => answerAfter(0)(req, res))));
    const { url, metric } = await gatewayOver([replica], [{ id: "a", gpus: [0] }], { replicaConcurrency: 1, scheduler: "fifo-rr", site: { queue: "llf" } });
    const all = await saturate(url, replica, metric, [2000, 5, 900]);
    gate.open();
    await Promise.all(all);
    expect(replica.seen.map((s) => s.body.max_tokens)).toEqual([1, 5, 900, 2000]);
  });

  it("follows the emergency ladder's directives for requests in its queue: squash with 503, re-steer within the pool", async () => {
    const gate = latch();
    const a = await started(new ScriptedReplica(launchOf("a", 0), (req, res) => void gate.opened.then(() => answerAfter(0)(req, res))));
    const b = await started(new ScriptedReplica(launchOf("b", 0, 1), answerAfter(0)));
    const requests = new RequestTracker({ nowMs: () => Date.now(), log: new RequestLog() });
    const { url, metric } = await gatewayOver([a, b], [{ id: "a", gpus: [0] }, { id: "b", gpus: [1] }], { replicaConcurrency: 1, requests });
    const first = chat(url, "a", { max_tokens: 1 });
    await expect.poll(() => a.seen.length).toBe(1);
    const queued: Promise<Response>[] = [];
    for (const max_tokens of [10, 20, 30]) {
      queued.push(chat(url, "a", { max_tokens }));
      await expect.poll(() => metric("greenference_gateway_queue_length")).toBe(queued.length);
    }
    const [squashed, resteered, ranked] = requests.inFlightOf("a").filter((r) => r.queued).map((r) => r.id);
    requests.direct(new Map([[squashed!, { squash: true }], [resteered!, { resteerTo: "b" }], [ranked!, { rank: 0 }]]));
    const refused = await queued[0]!;
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ error: { code: "squashed", message: expect.stringMatching(/emergency ladder/) } });
    const moved = await queued[1]!;
    expect([moved.status, moved.headers.get("x-greenference-replica")]).toEqual([200, "b#0"]);
    gate.open();
    await first;
    expect((await queued[2]!).headers.get("x-greenference-replica")).toBe("a#0");
    expect(b.seen.map((r) => r.body.max_tokens)).toEqual([20]);
  });

  it("keeps an instance's queue itself while the emergency ladder stands there: its replica is sent what its engine admits, the rest wait where their ranks reach them", async () => {
    const gate = latch();
    const a = await started(new ScriptedReplica(launchOf("a", 0), (req, res) => void gate.opened.then(() => answerAfter(0)(req, res))));
    // The engine has a request waiting, and admits none, as its gauge says.
    a.waiting = 1;
    const clock = { ms: 0 };
    const requests = new RequestTracker({ nowMs: () => clock.ms, log: new RequestLog() });
    const { url, metric } = await gatewayOver([a], [{ id: "a", gpus: [0] }], { replicaConcurrency: 64, requests, balanceReadMs: 10 });
    const all = [10, 20, 30].map((max_tokens) => chat(url, "a", { max_tokens }));
    // No ladder standing: every request goes on to the engine, whose queue the gateway cannot reorder.
    await expect.poll(() => a.seen.length).toBe(3);
    requests.keepQueue("a", clock.ms + 10_000);
    await new Promise((resolve) => setTimeout(resolve, 50)); // the gauges' reads begin
    for (const max_tokens of [40, 50, 60]) {
      all.push(chat(url, "a", { max_tokens }));
      await expect.poll(() => metric("greenference_gateway_queue_length")).toBe(all.length - 3);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(a.seen.length).toBe(3);
    // The ladder's ranks reach the three held here: the last to arrive runs first.
    const held = requests.inFlightOf("a").filter((r) => r.queued).map((r) => r.id);
    requests.direct(new Map(held.map((id, i) => [id, { rank: held.length - 1 - i }])));
    // The engine admits what waited: the next read lets the held ones go, in their ranks.
    a.waiting = 0;
    gate.open();
    expect((await Promise.all(all)).map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(a.seen.map((r) => r.body.max_tokens)).toEqual([10, 20, 30, 60, 50, 40]);
  });

  it("refuses past the queue's length and after its longest wait, with 503 and the reason", async () => {
    const { replica, gate, url, metric } = await oneSlot({ queueMax: 1, queueWaitMs: 150 });
    const [first, waiting] = await saturate(url, replica, metric, [5]);
    const full = await chat(url, "a");
    expect(full.status).toBe(503);
    expect(await full.json()).toMatchObject({ error: { code: "queue_full", message: expect.stringMatching(/site queue is full \(1 requests/) } });
    const late = await waiting!;
    expect(late.status).toBe(503);
    expect(await late.json()).toMatchObject({ error: { code: "queue_timeout", message: expect.stringMatching(/no replica was free within 150 ms .* for instance a/) } });
    gate.open();
    expect((await first!).status).toBe(200);
    expect(metric("greenference_gateway_rejected_total")).toBe(2);
  });

  it("refuses what is queued with 503 when it stops", async () => {
    const { replica, url, metric, gateway } = await oneSlot();
    const [first, queued] = await saturate(url, replica, metric, [5]);
    const closed = gateway.close(50);
    const refused = await queued!;
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ error: { code: "stopping", message: "the site agent is stopping" } });
    await closed;
    // The one in flight outlived the grace period and was cut.
    await expect(first!.then((r) => r.text())).rejects.toThrow();
  });

  it("takes a request whose client went away out of the queue, and aborts one in flight", async () => {
    const { replica, url, metric } = await oneSlot();
    const gone = new AbortController();
    const first = chat(url, "a", {}, { signal: gone.signal });
    await expect.poll(() => replica.seen.length).toBe(1);
    const queued = new AbortController();
    const second = chat(url, "a", {}, { signal: queued.signal });
    await expect.poll(() => metric("greenference_gateway_queue_length")).toBe(1);
    queued.abort();
    await expect(second).rejects.toThrow();
    await expect.poll(() => metric("greenference_gateway_queue_length")).toBe(0);
    gone.abort();
    await expect(first).rejects.toThrow();
    await expect.poll(() => replica.seen[0]!.closedEarly).toBe(true);
    await expect.poll(() => metric("greenference_gateway_requests_in_flight")).toBe(0);
    expect(metric("greenference_gateway_rejected_total")).toBe(2);
    expect(replica.seen.length).toBe(1);
  });
});

describe("site gateway: decode pools", () => {
  const ecofreq = { mode: "policy", policy: "ecofreq", minMhz: 1005, maxMhz: 1980 } as const;
  const decodePool: InstanceInput[] = [{ id: "d0", gpus: [0], role: "decode", clock: ecofreq }, { id: "d1", gpus: [1], role: "decode", clock: ecofreq }];

  it("places requests for role=decode instances with EcoRoute over the pool's replicas (a GreenServe plan)", async () => {
    const d0 = await started(new ScriptedReplica(launchOf("d0", 0, 0, "decode"), answerAfter(0)));
    const d1 = await started(new ScriptedReplica(launchOf("d1", 0, 1, "decode"), answerAfter(0)));
    const { url } = await gatewayOver([d0, d1], decodePool, { policy: "greenserve" });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await chat(url, "d0"));
    // Idle replicas sit at the same frequency before and after: Algorithm 2's case 1a, round-robin.
    expect(answers.map((r) => r.headers.get("x-greenference-ecoroute-rule"))).toEqual(["1a", "1a", "1a", "1a"]);
    expect(answers.map((r) => r.headers.get("x-greenference-replica"))).toEqual(["d0#0", "d1#0", "d0#0", "d1#0"]);
    expect(answers[1]!.headers.get("x-greenference-rerouted")).toBe("d1");
  });

  it("packs decode requests onto the busiest replica while it has room in its GEMM tile when the plan says so (Greenference's)", async () => {
    const d0 = await started(new ScriptedReplica(launchOf("d0", 0, 0, "decode"), answerAfter(300)));
    const d1 = await started(new ScriptedReplica(launchOf("d1", 0, 1, "decode"), answerAfter(300)));
    const { url } = await gatewayOver([d0, d1], decodePool, { policy: "greenference", site: { decodeRouting: "pack" } });
    // Four requests in flight together: each finds d0 busiest with room, so d1 stays idle.
    const answers = await Promise.all([0, 1, 2, 3].map(() => chat(url, "d0")));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(answers.map((r) => r.headers.get("x-greenference-replica"))).toEqual(["d0#0", "d0#0", "d0#0", "d0#0"]);
    expect(answers.map((r) => r.headers.get("x-greenference-ecoroute-rule"))).toEqual(["1a", "1a", "1a", "1a"]);
    expect(d1.seen.length).toBe(0);
  });
});

describe("site gateway: join-idle balance (the combined policy's)", () => {
  const instances: InstanceInput[] = [{ id: "a", gpus: [0] }, { id: "b", gpus: [1] }, { id: "c", gpus: [2] }];
  const routing = { SM: [{ site: SITE, instance: "a", weight: 1 }, { site: SITE, instance: "b", weight: 1 }] };
  /** Replicas of a, b and c whose queue gauges say `waiting`; the gateway reads them once at start (balanceReadMs far off). */
  async function over(waiting: Record<string, number>, site: { balance?: "join-idle" | "as-routed" } = { balance: "join-idle" }) {
    const engines = await Promise.all(["a", "b", "c"].map((id, gpu) => started(new ScriptedReplica(launchOf(id, 0, gpu), answerAfter(0)))));
    engines.forEach((e) => (e.waiting = waiting[e.launch.instanceId] ?? 0));
    const gateway = await gatewayOver(engines, instances, { routing, site, balanceReadMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    return gateway;
  }

  it("moves a request whose instance has requests waiting at every replica to an instance with none of its class, else of its model, once per read, and says so", async () => {
    const { url, metric } = await over({ a: 3 });
    const moved = await chat(url, "a");
    // c has no queue either, but the plan routes SM to a and b: b first.
    expect(moved.headers.get("x-greenference-replica")).toBe("b#0");
    expect(moved.headers.get("x-greenference-rerouted")).toBe("b");
    expect(moved.headers.get("x-greenference-rerouted-reason")).toMatch(/every replica of instance a has requests waiting: joined b of class SM/);
    // b's read of none waiting is spent on that request: the next joins c, planned for another class.
    const next = await chat(url, "a");
    expect(next.headers.get("x-greenference-replica")).toBe("c#0");
    expect(next.headers.get("x-greenference-rerouted-reason")).toMatch(/joined c of model llama3.1-8b/);
    // And with every read of none spent, the third stays on a until the engines are read again.
    expect((await chat(url, "a")).headers.get("x-greenference-replica")).toBe("a#0");
    expect(metric("greenference_gateway_rerouted_total")).toBe(2);
  });

  it("keeps a request on the instance the edge chose when it has no queue, when every other instance has one too, or when the plan does not ask", async () => {
    for (const [waiting, site] of [[{ a: 0 }, { balance: "join-idle" }], [{ a: 3, b: 1, c: 2 }, { balance: "join-idle" }], [{ a: 3 }, {}]] as const) {
      const { url, gateway } = await over(waiting, site);
      const response = await chat(url, "a");
      expect(response.headers.get("x-greenference-replica")).toBe("a#0");
      expect(response.headers.get("x-greenference-rerouted")).toBeNull();
      await gateway.close(0);
    }
  });
});
