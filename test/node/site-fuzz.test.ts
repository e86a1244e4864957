import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fuzzOnce, gatewayRequest, localApiRequest } from "../../bench/faults/fuzz-requests.ts";
import { httpSend } from "../../bench/faults/http-send.ts";
import { gatewaySender, mostlySigned } from "../../bench/faults/site-senders.ts";
import { Agent } from "../../host-agent/agent/agent.ts";
import { sliceBody } from "../../host-agent/applier/plan-fixtures.test-helper.ts";
import { loadAgentConfig } from "../../host-agent/config/load-agent-config.ts";
import { sleep } from "../../host-agent/util/backoff.ts";
import { startFakeEdge } from "./fake-edge.test-helper.ts";

/** A few hundred runs per door here; `greenference bench faults` runs thousands. */
const RUNS = 250;
const SITE = "wind-a";
const TOKEN = "gfs_wind-a_0123456789abcdef";
const INGRESS_SECRET = `gfi_${"d1".repeat(32)}`;
const READ = "rd_0123456789abcdef0123";
const CONTROL = "ctl_0123456789abcdef0123";

let edge: Awaited<ReturnType<typeof startFakeEdge>>;
let agent: Agent;
let localApiUrl: string;

/** What a refused request must leave alone: the plan the applier holds, its instances and every GPU's locked clock. */
async function siteState(): Promise<string> {
  const status = await agent.status();
  const gpus = (status.gpus as Record<string, unknown>[]).map((g) => ({ index: g.index, locked: g.lockedClockMhz ?? null }));
  const { appliedVersion, desiredVersion } = agent.applier.status();
  return JSON.stringify({ appliedVersion, desiredVersion, gpus, instances: (status.instances as { id: string }[]).map((i) => i.id).sort() });
}

beforeAll(async () => {
  edge = await startFakeEdge(SITE, TOKEN);
  edge.state.plan = sliceBody(1, SITE, [{ id: "i0", gpus: [0], tp: 1 }], { SM: [{ site: SITE, instance: "i0", weight: 1 }] });
  agent = await Agent.start(
    loadAgentConfig({ flags: { site: SITE, token: TOKEN, edge: edge.url, gpu: "sim", engine: "sim", simGpus: "2", simSpeed: "50", heartbeatMs: "200", planPollMs: "100", ingress: "127.0.0.1:0", ingressSecret: INGRESS_SECRET, listen: "127.0.0.1:0", readToken: READ, controlToken: CONTROL } }),
    { log: () => undefined },
  );
  const deadline = Date.now() + 10_000;
  while (agent.applier.status().appliedVersion !== 1) {
    if (Date.now() > deadline) throw new Error(`plan 1 not applied: ${JSON.stringify(agent.applier.status())}`);
    await sleep(20);
  }
  localApiUrl = agent.localApiUrl!;
});
afterAll(async () => {
  await agent?.stop();
  await edge?.close();
});

describe("fuzzing a real agent's doors over HTTP", () => {
  it("the site gateway answers no signed or unsigned request with a 5xx, and no refused one changes the site", async () => {
    const send = gatewaySender(agent.ingressUrl!, INGRESS_SECRET, mostlySigned);
    const baseline = { text: await siteState() };
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(gatewayRequest({ model: "llama3.1-8b", sites: [SITE], tokens: [TOKEN] }), async (request) => {
        const verdict = await fuzzOnce(request, send, siteState, baseline);
        statuses.add(verdict.status);
        expect(verdict, `${request.method} ${request.path}`).toMatchObject({ serverError: false, stateChanged: false });
      }),
      { numRuns: RUNS, seed: 26 },
    );
    expect([...statuses]).toEqual(expect.arrayContaining([200, 400, 401]));
  });

  it("the local API answers no request with a 5xx, and no refused one changes a clock or the plan", async () => {
    const send = httpSend(localApiUrl);
    const baseline = { text: await siteState() };
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(localApiRequest({ model: "llama3.1-8b", sites: [SITE], tokens: [READ, CONTROL] }), async (request) => {
        const verdict = await fuzzOnce(request, send, siteState, baseline);
        statuses.add(verdict.status);
        expect(verdict, `${request.method} ${request.path}`).toMatchObject({ serverError: false, stateChanged: false });
      }),
      { numRuns: RUNS, seed: 26 },
    );
    expect([...statuses]).toEqual(expect.arrayContaining([200, 400, 401, 404, 405]));
  });
});
