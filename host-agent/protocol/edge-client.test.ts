import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeServer, listen } from "../util/http.ts";
import { EdgeClient, EdgeError } from "./edge-client.ts";

const seen: { method?: string; url?: string; auth?: string; etag?: string }[] = [];
let plan: "none" | "v4" | "fail" = "none";
const server = createServer((req, res) => {
  seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, etag: req.headers["if-none-match"] as string | undefined });
  if (req.url?.endsWith("/plan")) {
    if (plan === "none") return void res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "no plan has been issued yet", code: "no_plan" } }));
    if (plan === "fail") return void res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "Missing or wrong site token" } }));
    if (req.headers["if-none-match"] === '"plan-4"') return void res.writeHead(304, { etag: '"plan-4"' }).end();
    return void res.writeHead(200, { etag: '"plan-4"', "content-type": "application/json" }).end(JSON.stringify({ version: 4 }));
  }
  res.writeHead(200, { "content-type": "application/json" }).end("{}");
});
let url = "";
beforeAll(async () => {
  url = await listen(server, "127.0.0.1", 0);
});
afterAll(() => closeServer(server));

describe("EdgeClient", () => {
  it("pulls the plan with the site token and ETag: none, a body, then unchanged", async () => {
    const edge = new EdgeClient({ edgeUrl: `${url}/`, site: "wind-a", token: "gfs_wind-a_01" });
    expect(await edge.pullPlan()).toEqual({ kind: "none" });
    plan = "v4";
    expect(await edge.pullPlan()).toEqual({ kind: "plan", body: { version: 4 }, etag: '"plan-4"' });
    expect(await edge.pullPlan('"plan-4"')).toEqual({ kind: "unchanged" });
    expect(seen.at(-1)).toEqual({ method: "GET", url: "/agent/v1/sites/wind-a/plan", auth: "Bearer gfs_wind-a_01", etag: '"plan-4"' });
    await edge.reportApplied({ planVersion: 4, appliedAtMs: 1, ok: true, instances: [] });
    expect(seen.at(-1)).toMatchObject({ method: "POST", url: "/agent/v1/sites/wind-a/applied" });
  });

  it("says why a call failed: the edge's error message, or that it is unreachable", async () => {
    plan = "fail";
    const edge = new EdgeClient({ edgeUrl: url, site: "wind-a", token: "bad" });
    await expect(edge.pullPlan()).rejects.toMatchObject({ status: 401, message: expect.stringMatching(/Missing or wrong site token/) });
    const gone = new EdgeClient({ edgeUrl: "http://127.0.0.1:9", site: "wind-a", token: "t", timeoutMs: 2000 });
    const error = await gone.pullPlan().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EdgeError);
    expect(error).toMatchObject({ status: null, message: expect.stringMatching(/edge unreachable/) });
  });
});
