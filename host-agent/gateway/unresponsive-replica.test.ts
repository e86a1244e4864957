import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EngineFiles } from "../engines/engine-files.ts";
import { vllmFlavor } from "../engines/engine-flavors.ts";
import { FAKE_VLLM_COMMAND, fakeEngineLog } from "../engines/fake-engine.test-helper.ts";
import { ProcessEngineDriver } from "../engines/process-engine-driver.ts";
import type { EngineLaunch } from "../engines/engine.ts";
import { chat, cleanUp, gatewayOver, simEngines, started } from "./gateway.test-helper.ts";
import { longPrompt, split } from "./handoff.test-helper.ts";
import { launchOf } from "./scripted-replica.test-helper.ts";

// Unresponsive within about 2 s of a hang; the restart (which used to be what ended the requests) is far off.
const liveness = { periodMs: 100, timeoutMs: 500, failures: 3, restartAfterMs: 120_000 };
/** Well within the restart delay, and past the 3 failed checks of `liveness`. */
const PROMPTLY_MS = 6000;
const logs: ReturnType<typeof fakeEngineLog>[] = [];
const stoppedPids: number[] = [];

afterEach(async () => {
  for (const pid of stoppedPids.splice(0)) process.kill(pid, "SIGCONT");
  await cleanUp();
  for (const log of logs.splice(0)) log.remove();
});

/** A fake vLLM engine process for replica 0 of `instance`, watched for liveness; `env` sets how it answers. */
async function fakeVllm(instance: string, gpu: number, env: Record<string, string> = {}, role: EngineLaunch["role"] = "mixed") {
  const log = fakeEngineLog();
  logs.push(log);
  const files = new EngineFiles(join(log.dir, "engines"));
  const handoff = role === "mixed" ? {} : { kvHandoffArgs: vllmFlavor.kvHandoffArgs };
  const driver = new ProcessEngineDriver({ flavor: vllmFlavor, command: FAKE_VLLM_COMMAND, ...handoff, host: "127.0.0.1", portBase: 0, env: log.env(env), files, startTimeoutMs: 10_000, stopGraceMs: 1000, pollMs: 50, liveness });
  const engine = await started(driver.create(launchOf(instance, 0, gpu, role), () => undefined));
  return {
    engine,
    requests: () => log.events().filter((e) => e.event === "request").length,
    /** Stops (SIGSTOP) its process: alive, answering nothing. */
    hang: () => {
      const pid = log.events()[0]!.pid;
      process.kill(pid, "SIGSTOP");
      stoppedPids.push(pid);
    },
  };
}

const SM_ON_B = [
  { id: "a", gpus: [0] },
  { id: "b", gpus: [1], loadRps: { SM: 1 } },
];

describe("site gateway: requests in flight at a replica that stops answering its health checks", () => {
  it("moves those it had not begun to answer to another replica of the model at once, not after the restart", async () => {
    const hung = await fakeVllm("a", 0, { FAKE_ENGINE_DELAY_MS: "60000" });
    const spare = await fakeVllm("b", 1);
    const { url, metric } = await gatewayOver([hung.engine, spare.engine], SM_ON_B);
    const signal = AbortSignal.timeout(20_000);
    const whole = chat(url, "a", {}, { signal });
    const streamed = chat(url, "a", { stream: true }, { signal });
    await expect.poll(hung.requests, { timeout: 5000 }).toBe(2);
    hung.hang();
    const hungAt = Date.now();
    const [a, b] = await Promise.all([whole, streamed]);
    expect(Date.now() - hungAt).toBeLessThan(PROMPTLY_MS);
    for (const response of [a, b]) {
      expect(response.status).toBe(200);
      expect(response.headers.get("x-greenference-replica")).toBe("b#0");
    }
    expect(((await a.json()) as { object: string }).object).toBe("chat.completion");
    const events = (await b.text()).split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    expect(events.some((e) => e.includes('"error"'))).toBe(false);
    expect(spare.requests()).toBe(2);
    expect(metric("greenference_gateway_retries_total")).toBe(2);
  });

  it("answers 502 at once, as for an engine that failed, when no other replica serves the model, so the edge tries another site", async () => {
    const hung = await fakeVllm("a", 0, { FAKE_ENGINE_DELAY_MS: "60000" });
    const { url } = await gatewayOver([hung.engine], [{ id: "a", gpus: [0] }]);
    const response = chat(url, "a", {}, { signal: AbortSignal.timeout(20_000) });
    await expect.poll(hung.requests, { timeout: 5000 }).toBe(1);
    hung.hang();
    const hungAt = Date.now();
    const answer = await response;
    expect(Date.now() - hungAt).toBeLessThan(PROMPTLY_MS);
    expect(answer.status).toBe(502);
    const { error } = (await answer.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("upstream_failed");
    expect(error.message).toMatch(/^replica a#0 failed before answering: it stopped answering its health checks \(3 checks in a row failed, the last: no answer within 500 ms\); no other replica to retry on$/);
  });

  it("ends a stream it had begun with an error event, and counts and logs it as broken: it cannot be retried", async () => {
    const hung = await fakeVllm("a", 0, { FAKE_ENGINE_TOKEN_MS: "60000" });
    const spare = await fakeVllm("b", 1);
    const messages: string[] = [];
    const { url, metric } = await gatewayOver([hung.engine, spare.engine], SM_ON_B, { log: (m) => messages.push(m) });
    const response = await chat(url, "a", { stream: true }, { signal: AbortSignal.timeout(20_000) });
    expect(response.headers.get("x-greenference-replica")).toBe("a#0");
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('"content":"t"');
    hung.hang();
    const hungAt = Date.now();
    let rest = "";
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    expect(Date.now() - hungAt).toBeLessThan(PROMPTLY_MS);
    const events = rest.split("\n\n").filter(Boolean);
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.slice("data: ".length))).toEqual({
      error: { message: expect.stringMatching(/^the engine failed mid-response: it stopped answering its health checks \(3 checks in a row failed/), type: "server_error", param: null, code: "upstream_failed" },
    });
    await expect.poll(() => metric("greenference_gateway_broken_streams_total"), { timeout: 2000 }).toBe(1);
    expect(messages).toContainEqual(expect.stringMatching(/^gateway: replica a#0 failed mid-response, the client's response was cut: it stopped answering its health checks/));
    expect(spare.requests()).toBe(0);
  });

  it("fails a prefill at once, so its decode replica serves the request whole without waiting for it", async () => {
    const prefill = await fakeVllm("p0", 0, { FAKE_ENGINE_DELAY_MS: "60000" }, "prefill");
    const [decode] = await simEngines(["d0", 0, 1, "decode"]);
    const { url } = await gatewayOver([prefill.engine, decode!], split, { policy: "greenserve" });
    const response = chat(url, "d0", longPrompt, { signal: AbortSignal.timeout(20_000) });
    await expect.poll(prefill.requests, { timeout: 5000 }).toBe(1);
    prefill.hang();
    const hungAt = Date.now();
    const answer = await response;
    expect(Date.now() - hungAt).toBeLessThan(PROMPTLY_MS);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("x-greenference-prefill")).toMatch(/^whole: prefill on p0#0 failed: prefill engine unreachable: it stopped answering its health checks \(3 checks/);
    expect(((await answer.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens).toBe(8);
  });
});
