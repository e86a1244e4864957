import fc from "fast-check";
import { LocalStack } from "../lib/stack/local-stack.ts";
import { smallStackConfig } from "../lib/stack/stack-config.ts";
import { badInputCases } from "./faults/bad-input-cases.ts";
import { runFaultMatrix } from "./faults/fault-matrix.ts";
import { edgeRequest, fuzzOnce, gatewayRequest, localApiRequest, type FuzzRequest } from "./faults/fuzz-requests.ts";
import { edgeSnapshot, siteSnapshot } from "./faults/http-state.ts";
import { runBadInputCases, type Send, type Snapshot } from "./faults/run-cases.ts";
import { httpSend, retryingDevProxy } from "./faults/http-send.ts";
import { gatewaySender, mostlySigned } from "./faults/site-senders.ts";
import type { FaultRow } from "./faults/traffic.ts";

export interface FaultsBenchOptions {
  dataDir: string;
  /** Fuzz runs per door: the edge, one site's gateway, its agent's local API. */
  fuzzRuns?: { edge: number; gateway: number; localApi: number };
  /** Seconds of traffic before and after each fault. */
  beforeS?: number;
  afterS?: number;
  log?: (line: string) => void;
}

export interface FaultsBenchResult {
  bad_inputs: { tried: number; correct: number; wrong: string[] };
  /** Requests of the table and the edge's fuzzing sent again after wrangler dev's proxy answered DEV_PROXY_RESTART (see traffic.ts). */
  dev_proxy_retries: number;
  fuzz: { runs: number; server_errors: number; state_changes: number; by_door: Record<string, { runs: number; server_errors: number; state_changes: number }>; failures: string[] };
  faults: FaultRow[];
  wall_s: number;
}

/**
 * The hostile-input and fault suite on the local stack (wrangler dev, 3 agents on simulated
 * GPUs): the table of bad inputs (bench/faults/bad-input-cases.ts) over HTTP, fast-check fuzzing of
 * the edge's JSON endpoints, a site's gateway and its agent's local API (no 5xx, no state change
 * after a refused request), and the fault matrix (bench/faults/fault-matrix.ts).
 */
export async function runFaultsBench(o: FaultsBenchOptions): Promise<FaultsBenchResult> {
  const started = performance.now();
  const log = o.log ?? (() => {});
  const runs = o.fuzzRuns ?? { edge: 6_000, gateway: 3_000, localApi: 2_000 };
  const config = smallStackConfig({ model: "llama3.1-8b", tps: [1, 2], dataDir: o.dataDir, maxOutputTokens: 400, siteIdleTimeoutS: 5 });
  const stack = await LocalStack.start({ config, load: false, autopilot: false, log });
  try {
    const [site, other] = stack.sites;
    const id = site!.site.id;
    log("bad inputs");
    const cases = badInputCases({ model: config.model, site: id, siteToken: stack.siteToken(id), otherSite: other!.site.id, adminToken: stack.adminToken });
    const devProxyRetries = { count: 0 };
    const edgeSend = retryingDevProxy(httpSend(stack.edgeUrl), devProxyRetries);
    const table = await runBadInputCases(cases, edgeSend, edgeSnapshot(stack));
    const sites = stack.sites.map((s) => s.site.id);
    const fuzzCtx = { model: config.model, sites };
    const doors: [string, fc.Arbitrary<FuzzRequest>, number, Send, Snapshot][] = [
      ["edge", edgeRequest({ ...fuzzCtx, tokens: [stack.adminToken, stack.siteToken(id)] }), runs.edge, edgeSend, edgeSnapshot(stack)],
      ["gateway", gatewayRequest({ ...fuzzCtx, tokens: [] }), runs.gateway, gatewaySender(site!.ingressUrl, stack.ingressSecret(id), mostlySigned), siteSnapshot(site!)],
      ["local_api", localApiRequest({ ...fuzzCtx, tokens: [site!.readToken, site!.controlToken] }), runs.localApi, httpSend(site!.localApiUrl), siteSnapshot(site!)],
    ];
    const byDoor: FaultsBenchResult["fuzz"]["by_door"] = {};
    const failures: string[] = [];
    for (const [door, arbitrary, n, send, snapshot] of doors) {
      log(`fuzz ${door}: ${n} runs`);
      const tally = { runs: 0, server_errors: 0, state_changes: 0 };
      const baseline = { text: await snapshot() };
      for (const request of fc.sample(arbitrary, { numRuns: n, seed: 26 })) {
        const verdict = await fuzzOnce(request, send, snapshot, baseline);
        tally.runs++;
        if (verdict.serverError) tally.server_errors++;
        if (verdict.stateChanged) tally.state_changes++;
        if ((verdict.serverError || verdict.stateChanged) && failures.length < 20) failures.push(`${door} ${verdict.status}${verdict.stateChanged ? " state changed" : ""}: ${request.method} ${request.path.slice(0, 80)} ${JSON.stringify(request.headers).slice(0, 200)} ${String(request.body ?? "").slice(0, 200)}`);
      }
      byDoor[door] = tally;
      log(`  ${JSON.stringify(tally)}`);
    }
    const total = (k: "runs" | "server_errors" | "state_changes") => Object.values(byDoor).reduce((s, t) => s + t[k], 0);
    const faults = await runFaultMatrix(stack, { beforeS: o.beforeS ?? 3, afterS: o.afterS ?? 12, log });
    return {
      bad_inputs: { tried: table.tried, correct: table.correct, wrong: table.verdicts.filter((v) => !v.correct).map((v) => `${v.name}: expected ${v.expected.status} ${v.expected.code}, got ${v.got.status} ${v.got.code}${v.stateChanged ? ", state changed" : ""}`) },
      dev_proxy_retries: devProxyRetries.count,
      fuzz: { runs: total("runs"), server_errors: total("server_errors"), state_changes: total("state_changes"), by_door: byDoor, failures },
      faults,
      wall_s: Math.round((performance.now() - started) / 100) / 10,
    };
  } finally {
    await stack.stop();
  }
}

/** The readable view: the bad-input score, the fuzz tally and the fault matrix as a table. */
export function faultsBenchTable(r: FaultsBenchResult): string {
  const lines = [
    `bad inputs: ${r.bad_inputs.correct} of ${r.bad_inputs.tried} answered as the table says`,
    ...r.bad_inputs.wrong.map((w) => `  wrong: ${w}`),
    `fuzz: ${r.fuzz.runs} runs, ${r.fuzz.server_errors} server errors, ${r.fuzz.state_changes} state changes (${Object.entries(r.fuzz.by_door).map(([d, t]) => `${d} ${t.runs}`).join(", ")})`,
    ...r.fuzz.failures.map((f) => `  ${f}`),
    `sent again after wrangler dev's proxy lost its connection to the Worker: ${r.dev_proxy_retries} (table and edge fuzzing), ${r.faults.reduce((n, f) => n + f.dev_proxy_retries, 0)} (fault matrix)`,
    "",
    "| fault | requests | served | lost | errored with reason | recovery s | dev proxy retries |",
    "|---|---|---|---|---|---|---|",
    ...r.faults.map((f) => `| ${f.name} | ${f.requests} | ${f.served} | ${f.lost} | ${f.errored_with_reason} | ${f.recovery_s ?? "never"} | ${f.dev_proxy_retries} |`),
    ...r.faults.filter((f) => f.note).map((f) => `  ${f.name}: ${f.note}`),
    `wall time ${r.wall_s} s`,
  ];
  return lines.join("\n");
}
