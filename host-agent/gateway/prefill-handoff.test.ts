import { afterEach, describe, expect, it } from "vitest";
import type { InstanceInput } from "../applier/plan-fixtures.test-helper.ts";
import { RequestLog } from "../telemetry/request-log.ts";
import { RequestTracker } from "../telemetry/request-tracker.ts";
import { chat, cleanUp, gatewayOver, simEngines, started } from "./gateway.test-helper.ts";
import { engineCounter, expectSplitBetween, longPrompt, split, usageOfStream, type Receipt } from "./handoff.test-helper.ts";
import { latch, launchOf, ScriptedReplica } from "./scripted-replica.test-helper.ts";
import { decodeBody, prefillBody } from "./prefill-handoff.ts";

afterEach(cleanUp);

describe("prefill/decode KV handoff (vLLM's kv_transfer_params)", () => {
  it("shapes the prefill engine's request (one token, JSON, keep the KV) and the decode engine's (the KV's address)", () => {
    const asked = Buffer.from(JSON.stringify({ model: "m", messages: [], max_tokens: 200, max_completion_tokens: 200, n: 2, stream: true, stream_options: { include_usage: true }, min_tokens: 5 }));
    expect(JSON.parse(prefillBody(asked).toString())).toEqual({
      model: "m",
      messages: [],
      max_tokens: 1,
      max_completion_tokens: 1,
      n: 1,
      stream: false,
      kv_transfer_params: { do_remote_decode: true, do_remote_prefill: false, remote_engine_id: null, remote_block_ids: null, remote_host: null, remote_port: null },
    });
    const at = { do_remote_prefill: true, remote_host: "127.0.0.1", remote_port: 8100, remote_engine_id: "p0", remote_block_ids: [1, 2] };
    expect(JSON.parse(decodeBody(Buffer.from('{"model":"m","max_tokens":200}'), { kv_transfer_params: at }).toString())).toEqual({ model: "m", max_tokens: 200, kv_transfer_params: at });
  });

  it("prefills a decode pool's request on the prefill replica, decodes it where the KV went, and bills both in one receipt", async () => {
    const [p0, d0] = await simEngines(["p0", 0, 0, "prefill"], ["d0", 0, 1, "decode"]);
    const log = new RequestLog();
    const { url, metric } = await gatewayOver([p0!, d0!], split, { policy: "greenserve", requests: new RequestTracker({ nowMs: () => performance.now(), log }) });

    const r = await chat(url, "d0", longPrompt);
    expect(r.status).toBe(200);
    expect(r.headers.get("x-greenference-prefill")).toBe("p0#0");
    await expectSplitBetween((await r.json()) as Receipt, p0!, d0!);
    expect(metric("greenference_gateway_prefill_handoffs_total")).toBe(1);
    // Neither engine logged the half it saw: the gateway logged the request once, with both halves' energy.
    await expect.poll(() => log.totals().get("d0")?.requests ?? 0).toBe(1);
    expect(log.totals().get("p0")).toBeUndefined();

    // The same request streamed: the receipt in the usage chunk carries the prefill too.
    const streamed = await chat(url, "d0", { ...longPrompt, stream: true, stream_options: { include_usage: true } });
    expect(streamed.headers.get("x-greenference-prefill")).toBe("p0#0");
    const usage = usageOfStream(await streamed.text());
    expect(usage?.completion_tokens).toBe(8);
    expect(usage?.greenference?.prefill_energy_j).toBeGreaterThan(0);
    expect(metric("greenference_gateway_prefill_handoffs_total")).toBe(2);
  });

  it("has the decode replica serve the request whole when no prefill replica can: the decode engine then computes the prompt", async () => {
    const [p0, d0] = await simEngines(["p0", 0, 0, "prefill"], ["d0", 0, 1, "decode"]);
    const { url, metric } = await gatewayOver([p0!, d0!], split, { policy: "greenserve" });
    const handed = ((await (await chat(url, "d0", longPrompt)).json()) as Receipt).usage.greenference;

    await p0!.stop();
    const whole = await chat(url, "d0", longPrompt);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("x-greenference-prefill")).toBe("whole: no prefill replica of llama3.1-8b here takes requests");
    const body = (await whole.json()) as Receipt;
    expect(body.usage.completion_tokens).toBe(8);
    expect(body.usage.greenference.prefill_energy_j).toBeUndefined();
    expect(metric("greenference_gateway_prefill_whole_total")).toBe(1);
    // Served whole, the decode engine's share of the same request is larger than after a handoff: it prefilled the prompt itself.
    expect(body.usage.greenference.energy_j).toBeGreaterThan(1.5 * (handed.energy_j - handed.prefill_energy_j!));
  });

  it("serves whole, saying why, when the prefill replica fails or every one is busy", async () => {
    const gate = latch();
    /** A vLLM prefill replica: the first request waits for `gate`, then every one fails. */
    class FailingPrefill extends ScriptedReplica {
      readonly kvHandoff = "kv-transfer-params" as const;
    }
    const p0 = await started(new FailingPrefill(launchOf("p0", 0, 0, "prefill"), (_req, res, seen) => void gate.opened.then(() => res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no KV connector (${seen.body.max_tokens} token)` } })))));
    // Two decode replicas, one request in flight each: the prefill replica's one slot is what runs out.
    const decoders = await simEngines(["d0", 0, 1, "decode"], ["d0", 1, 2, "decode"]);
    const twoDecoders: InstanceInput[] = [split[0]!, { id: "d0", gpus: [1, 2], role: "decode", replicas: 2 }];
    const { url, metric } = await gatewayOver([p0, ...decoders], twoDecoders, { policy: "greenserve", replicaConcurrency: 1 });
    const first = chat(url, "d0", longPrompt);
    await expect.poll(() => p0.seen.length).toBe(1);
    const second = await chat(url, "d0", longPrompt);
    expect([second.status, second.headers.get("x-greenference-prefill")]).toEqual([200, "whole: every prefill replica of llama3.1-8b here is busy"]);
    gate.open();
    const failed = await first;
    expect([failed.status, failed.headers.get("x-greenference-prefill")]).toEqual([200, "whole: prefill on p0#0 failed: prefill engine answered HTTP 500: no KV connector (1 token)"]);
    expect(((await failed.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens).toBe(8);
    expect(metric("greenference_gateway_prefill_whole_total")).toBe(2);
  });

  it("refuses a request that carries kv_transfer_params itself: only the gateway sets it", async () => {
    const [p0, d0] = await simEngines(["p0", 0, 0, "prefill"], ["d0", 0, 1, "decode"]);
    const { url } = await gatewayOver([p0!, d0!], split, { policy: "greenserve" });
    const r = await chat(url, "d0", { kv_transfer_params: { do_remote_prefill: true, remote_host: "169.254.169.254", remote_port: 80 } });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { message: string; param: string } }).error).toMatchObject({ param: "kv_transfer_params" });
    expect(await engineCounter(d0!, "vllm:request_success_total")).toBe(0);
  });
});
