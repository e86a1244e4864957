import { createServer, type Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { chatPromptShape } from "../../src/core/classify/prompt-shape.ts";
import { estimateInputTokens } from "../../src/core/classify/token-estimate.ts";
import { RequestLog } from "../telemetry/request-log.ts";
import { RequestTracker } from "../telemetry/request-tracker.ts";
import { closeServer, listen } from "../util/http.ts";
import { chat, cleanUp, gatewayOver, simEnginesWith, started } from "./gateway.test-helper.ts";
import { engineCounter, expectSplitBetween, longPrompt, split, usageOfStream, type Receipt } from "./handoff.test-helper.ts";
import { launchOf, ScriptedReplica } from "./scripted-replica.test-helper.ts";

const servers: Server[] = [];
afterEach(async () => {
  await cleanUp();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await closeServer(s, 0);
  }
});

const sglangSite = () => simEnginesWith({ kvProtocol: "bootstrap" }, ["p0", 0, 0, "prefill"], ["d0", 0, 1, "decode"]);

/** An SGLang prefill replica scripted by the test, whose bootstrap server is `bootstrapPort`. */
class ScriptedSglangPrefill extends ScriptedReplica {
  readonly kvHandoff = "bootstrap" as const;
  kvBootstrap: { host: string; port: number } | undefined;
}

/** A bootstrap server for a scripted prefill replica: records the rooms decode engines ask for, and answers with `answer` (never, when it returns undefined). */
async function bootstrapServer(answer: (room: number) => { prompt_tokens: number } | undefined) {
  const asked: number[] = [];
  const server = createServer((req, res) => {
    const room = Number((req.url ?? "").split("?")[0]!.split("/").at(-1));
    asked.push(room);
    const body = answer(room);
    if (body) res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ room, ...body }));
  });
  servers.push(server);
  const port = Number(new URL(await listen(server, "127.0.0.1", 0)).port);
  return { asked, at: { host: "127.0.0.1", port } };
}

describe("prefill/decode KV handoff with SGLang's bootstrap rooms", () => {
  it("sends the prefill and the decode replica the request at once, in one room, and bills both in one receipt", async () => {
    const promptTokens = estimateInputTokens(chatPromptShape({ model: "llama3.1-8b", ...longPrompt }));
    const bootstrap = await bootstrapServer(() => ({ prompt_tokens: promptTokens }));
    // The prefill answers only once the decode engine waits in its room: a gateway that waited for
    // the prefill before sending the decode half would never get an answer.
    const p0 = new ScriptedSglangPrefill(launchOf("p0", 0, 0, "prefill"), (_req, res, seen) => {
      const answer = () => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "chat.completion", choices: [], usage: { prompt_tokens: promptTokens, completion_tokens: 1, greenference: { energy_j: 2.5 } } }));
      const check = setInterval(() => {
        if (!bootstrap.asked.includes(seen.body.bootstrap_room as number)) return;
        clearInterval(check);
        answer();
      }, 5);
    });
    p0.kvBootstrap = bootstrap.at;
    await started(p0);
    const [d0] = await simEnginesWith({ kvProtocol: "bootstrap" }, ["d0", 0, 1, "decode"]);
    const { url, metric } = await gatewayOver([p0, d0!], split, { policy: "greenserve" });

    const r = await chat(url, "d0", { ...longPrompt, stream: true, stream_options: { include_usage: true } });
    expect([r.status, r.headers.get("x-greenference-prefill")]).toEqual([200, "p0#0"]);
    const usage = usageOfStream(await r.text());
    expect(usage?.completion_tokens).toBe(8);
    expect(usage?.greenference?.prefill_energy_j).toBe(2.5);
    const [seen] = p0.seen;
    expect(seen!.body).toMatchObject({ stream: false, bootstrap_host: "127.0.0.1", bootstrap_port: bootstrap.at.port, max_tokens: 8 });
    expect(seen!.body.stream_options).toBeUndefined();
    expect(bootstrap.asked).toEqual([seen!.body.bootstrap_room]);
    expect(metric("greenference_gateway_prefill_handoffs_total")).toBe(1);
  });

  it("runs between simulated SGLang engines: the prefill engine makes the first token, the decode engine the rest from the KV", async () => {
    const [p0, d0] = await sglangSite();
    const log = new RequestLog();
    const { url, metric } = await gatewayOver([p0!, d0!], split, { policy: "greenserve", requests: new RequestTracker({ nowMs: () => performance.now(), log }) });

    const r = await chat(url, "d0", longPrompt);
    expect([r.status, r.headers.get("x-greenference-prefill")]).toEqual([200, "p0#0"]);
    await expectSplitBetween((await r.json()) as Receipt, p0!, d0!);
    expect(metric("greenference_gateway_prefill_handoffs_total")).toBe(1);
    await expect.poll(() => log.totals().get("d0")?.requests ?? 0).toBe(1);
    expect(log.totals().get("p0")).toBeUndefined();
  });

  it("answers 503 with Retry-After when no prefill replica is there: an SGLang decode replica serves nothing whole", async () => {
    const [p0, d0] = await sglangSite();
    const { url, metric } = await gatewayOver([p0!, d0!], split, { policy: "greenserve" });
    await p0!.stop();
    const r = await chat(url, "d0", longPrompt);
    expect([r.status, r.headers.get("retry-after")]).toEqual([503, "1"]);
    const error = ((await r.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("no_replica");
    expect(error.message).toContain("no prefill replica of llama3.1-8b here takes requests, and an SGLang decode replica serves nothing without one");
    expect(await engineCounter(d0!, "vllm:request_success_total")).toBe(0);
    expect(metric("greenference_gateway_prefill_whole_total")).toBe(0);
    // Asked directly, the decode engine refuses a request without a room, as SGLang's decode mode does.
    const direct = await fetch(`${d0!.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "llama3.1-8b", ...longPrompt }) });
    expect(direct.status).toBe(400);
    expect(((await direct.json()) as { error: { message: string } }).error.message).toContain("disaggregation decode mode");
  });

  it("stops the waiting decode half when the prefill fails, and says why", async () => {
    // A bootstrap server that never answers: the decode engine would wait its full 30 s for the KV.
    const bootstrap = await bootstrapServer(() => undefined);
    const p0 = new ScriptedSglangPrefill(launchOf("p0", 0, 0, "prefill"), (_req, res) => void res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "out of KV blocks" } })));
    p0.kvBootstrap = bootstrap.at;
    await started(p0);
    const [d0] = await simEnginesWith({ kvProtocol: "bootstrap" }, ["d0", 0, 1, "decode"]);
    const { url, metric } = await gatewayOver([p0, d0!], split, { policy: "greenserve" });

    const r = await chat(url, "d0", longPrompt);
    expect(r.status).toBe(502);
    expect(((await r.json()) as { error: { message: string } }).error.message).toContain("prefill on p0#0 failed: prefill engine answered HTTP 500: out of KV blocks");
    expect(metric("greenference_gateway_prefill_failed_total")).toBe(1);
    expect(metric("greenference_gateway_prefill_handoffs_total")).toBe(0);
    expect(await engineCounter(d0!, "vllm:request_success_total")).toBe(0);
  });

  it("counts a decode engine's request waiting for its KV as waiting, as SGLang's transfer queue does", async () => {
    const bootstrap = await bootstrapServer(() => undefined);
    const p0 = new ScriptedSglangPrefill(launchOf("p0", 0, 0, "prefill"), () => undefined);
    p0.kvBootstrap = bootstrap.at;
    await started(p0);
    const [d0] = await simEnginesWith({ kvProtocol: "bootstrap" }, ["d0", 0, 1, "decode"]);
    const { url } = await gatewayOver([p0, d0!], split, { policy: "greenserve" });
    const client = new AbortController();
    const pending = chat(url, "d0", longPrompt, { signal: client.signal }).catch(() => undefined);
    await expect.poll(() => bootstrap.asked.length).toBe(1);
    expect(await d0!.load()).toMatchObject({ running: 0, waiting: 1 });
    expect(await engineCounter(d0!, "vllm:num_requests_waiting")).toBe(1);
    client.abort();
    await pending;
    await expect.poll(async () => (await d0!.load()).waiting).toBe(0);
  });

  it("refuses a request that carries bootstrap fields itself: only the gateway sets them", async () => {
    const [p0, d0] = await sglangSite();
    const { url } = await gatewayOver([p0!, d0!], split, { policy: "greenserve" });
    const r = await chat(url, "d0", { bootstrap_host: "169.254.169.254", bootstrap_port: 80, bootstrap_room: 1 });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { param: string } }).error.param).toMatch(/^bootstrap_/);
    expect(await engineCounter(d0!, "vllm:request_success_total")).toBe(0);
  });
});
