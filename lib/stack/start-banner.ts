import type { LocalStack } from "./local-stack.ts";

/**
 * What `npm start` prints once the stack runs: where everything is, the admin token and what to
 * do with it (create an API key, read the plan), a request to try and how to read its receipt, and how
 * to stop.
 */
export function startBanner(stack: LocalStack, o: { readyS: number; durationS: number | null; smoke: boolean }): string {
  const c = stack.config;
  const edge = stack.edgeUrl;
  const admin = `-H 'authorization: Bearer ${stack.adminToken}'`;
  return [
    "",
    `Greenference is running locally (ready in ${o.readyS.toFixed(1)} s; simulated GPUs; wind and carbon at ${c.speed}x real time, from ${c.seriesStart}).`,
    `  dashboard:    ${stack.dashboardUrl}   (also ${edge}/)`,
    `  edge API:     ${edge}/v1/chat/completions (OpenAI-compatible; model "${c.model}")`,
    `  admin token:  ${stack.adminToken}   (this run only; a new one each start)`,
    `  sites:        ${stack.sites.map((s) => `${s.site.id} (${s.site.kind}, ${s.site.gpus} GPUs) at ${s.ingressUrl}`).join("; ")}`,
    `  policy:       ${c.policy} on ${c.model} (variants ${c.variants.join(", ")}), simulated ${c.gpuType}s;  load: the Azure conversation trace at ${c.loadRps} req/s`,
    "",
    "Try:",
    `  curl -s ${edge}/v1/chat/completions -H 'content-type: application/json' \\`,
    `    -d '{"model":"${c.model}","messages":[{"role":"user","content":"Where does my answer run?"}],"max_tokens":32}'   # its cost: usage.greenference`,
    `  curl -s ${edge}/v1/usage/receipts/REQUEST_ID   # what a request cost, by its x-request-id (a stream's too)`,
    `  curl -s ${edge}/admin/v1/keys ${admin} -H 'content-type: application/json' -d '{"name":"me"}'   # an API key (shown once)`,
    `  curl -s ${edge}/admin/v1/plan ${admin}   # the plan in force`,
    "",
    o.smoke ? `Smoke run: stopping after ${o.durationS} s.` : o.durationS === null ? "Ctrl-C stops everything." : `Stopping after ${o.durationS} s (Ctrl-C stops sooner).`,
  ].join("\n");
}
