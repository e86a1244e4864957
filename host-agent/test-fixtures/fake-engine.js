#!/usr/bin/env node
// A stand-in for a vLLM or SGLang server, for the engine adapter tests. It takes the engine's
// argv as it is (only --port, --host and --served-model-name are read; with the last, a request for
// another model gets vLLM's 404), appends one JSON line per event to FAKE_ENGINE_LOG
// ({event:"start", argv, cuda, env: the names of its environment variables}, {event:"request"},
// {event:"signal", signal}), prints one line to stdout as it starts, and serves:
//   GET  /health               200 once FAKE_ENGINE_BOOT_MS (default 0) have passed
//   GET  /metrics              vLLM or SGLang metric names (FAKE_ENGINE_FLAVOR=vllm|sglang); running =
//                              requests in flight, waiting = FAKE_ENGINE_WAITING (default 0); after
//                              FAKE_ENGINE_METRICS_OK reads (default: no limit), HTTP 500; HTTP 500
//                              also while the file FAKE_ENGINE_METRICS_FAIL_FILE exists
//   POST /v1/chat/completions  answers after FAKE_ENGINE_DELAY_MS (default 0); with "stream": true, as
//                              vLLM does: one SSE event per output token (max_tokens of them, default
//                              4) every FAKE_ENGINE_TOKEN_MS (default 10), a usage event when
//                              stream_options.include_usage, then [DONE]
// SIGTERM ends it unless FAKE_ENGINE_IGNORE_SIGTERM=1 (to test the SIGKILL escalation).
/* global setTimeout */
import { appendFileSync, existsSync } from "node:fs";
import { createServer } from "node:http";
import { flagValue, listenAddress } from "./engine-argv.js";

const env = process.env;
const argv = process.argv.slice(2);
const { port, host } = listenAddress(argv);
const servedName = flagValue(argv, "--served-model-name", undefined);
const flavor = env.FAKE_ENGINE_FLAVOR ?? "vllm";
const bootMs = Number(env.FAKE_ENGINE_BOOT_MS ?? 0);
const delayMs = Number(env.FAKE_ENGINE_DELAY_MS ?? 0);
const tokenMs = Number(env.FAKE_ENGINE_TOKEN_MS ?? 10);
const startedAt = Date.now();
let running = 0;
let metricsReads = 0;

const log = (event) => {
  if (env.FAKE_ENGINE_LOG) appendFileSync(env.FAKE_ENGINE_LOG, `${JSON.stringify({ pid: process.pid, ...event })}\n`);
};
log({ event: "start", argv, cuda: env.CUDA_VISIBLE_DEVICES ?? null, nixlPort: env.VLLM_NIXL_SIDE_CHANNEL_PORT ?? null, env: Object.keys(env).sort() });
process.stdout.write(`fake ${env.FAKE_ENGINE_FLAVOR ?? "vllm"} engine: starting on ${host}:${port}\n`);

const metrics = () => {
  const waiting = Number(env.FAKE_ENGINE_WAITING ?? 0);
  const kv = Math.min(1, running * 0.1);
  if (flavor === "sglang") {
    return `# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{model_name="m"} ${running}\nsglang:num_queue_reqs{model_name="m"} ${waiting}\nsglang:token_usage{model_name="m"} ${kv}\n`;
  }
  return [
    "# HELP vllm:num_requests_running Number of requests currently running on GPU.",
    "# TYPE vllm:num_requests_running gauge",
    `vllm:num_requests_running{engine="0",model_name="m"} ${running}`,
    `vllm:num_requests_waiting{engine="0",model_name="m"} ${waiting}`,
    `vllm:gpu_cache_usage_perc{engine="0",model_name="m"} ${kv}`,
    "",
  ].join("\n");
};

const server = createServer((req, res) => {
  if (req.url === "/health") {
    res.writeHead(Date.now() - startedAt >= bootMs ? 200 : 503).end();
  } else if (req.url === "/metrics") {
    if (env.FAKE_ENGINE_METRICS_OK !== undefined && metricsReads++ >= Number(env.FAKE_ENGINE_METRICS_OK)) return void res.writeHead(500).end("metrics failed");
    if (env.FAKE_ENGINE_METRICS_FAIL_FILE && existsSync(env.FAKE_ENGINE_METRICS_FAIL_FILE)) return void res.writeHead(500).end("metrics failed");
    res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(metrics());
  } else if (req.url === "/v1/chat/completions" && req.method === "POST") {
    running++;
    log({ event: "request" });
    let text = "";
    req.on("data", (c) => (text += c));
    req.on("end", () => {
      const body = JSON.parse(text);
      if (servedName !== undefined && body.model !== undefined && body.model !== servedName) {
        running--;
        res.writeHead(404, { "content-type": "application/json" });
        return void res.end(JSON.stringify({ error: { message: `The model \`${body.model}\` does not exist.`, type: "NotFoundError", param: null, code: 404 } }));
      }
      if (body.stream === true) return setTimeout(() => stream(res, body, body.max_tokens ?? 4), delayMs);
      setTimeout(() => {
        running--;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
      }, delayMs);
    });
  } else {
    res.writeHead(404).end();
  }
});
server.listen(port, host);

function stream(res, body, tokens) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const send = (event) => res.write(`data: ${JSON.stringify(event)}\n\n`);
  let sent = 0;
  const next = () => {
    send({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "t" }, finish_reason: sent + 1 === tokens ? "length" : null }] });
    if (++sent < tokens) return void setTimeout(next, tokenMs);
    if (body.stream_options?.include_usage) send({ object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 3, completion_tokens: tokens, total_tokens: 3 + tokens } });
    running--;
    res.end("data: [DONE]\n\n");
  };
  next();
}

process.on("SIGTERM", () => {
  log({ event: "signal", signal: "SIGTERM", running });
  if (env.FAKE_ENGINE_IGNORE_SIGTERM === "1") return;
  server.close();
  process.exit(0);
});
