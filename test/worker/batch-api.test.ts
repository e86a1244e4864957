import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { batchStub } from "../../durable-objects/batch-do.ts";
import { BATCH_LIMITS, type BatchObject } from "../../src/core/schemas/batch.ts";
import { useBatchSiteClient } from "../../src/worker/batch/batch-site-client.ts";
import { completion, Edge, errorOf, MODEL, takeDown, telemetry, testEnv } from "./edge-fixture.ts";

const edge = new Edge();
let alice: string;
let bob: string;

beforeAll(async () => {
  await edge.setUp(1);
  useBatchSiteClient(edge.sites.client);
  alice = await createKey("alice");
  bob = await createKey("bob");
});
afterAll(() => useBatchSiteClient(null));

async function createKey(name: string): Promise<string> {
  const r = await edge.admin("POST", "/admin/v1/keys", { name });
  return ((await r.json()) as { key: string }).key;
}

const as = (key: string, init: RequestInit = {}): RequestInit => ({ ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${key}` } });

function chatLine(customId: string, content = "Hello") {
  return { custom_id: customId, method: "POST", url: "/v1/chat/completions", body: { model: MODEL, messages: [{ role: "user", content }], max_tokens: 16 } };
}

async function upload(key: string, lines: unknown[] | string, purpose = "batch"): Promise<Response> {
  const form = new FormData();
  form.append("purpose", purpose);
  form.append("file", new File([typeof lines === "string" ? lines : lines.map((l) => JSON.stringify(l)).join("\n")], "input.jsonl"));
  return edge.fetch("/v1/files", as(key, { method: "POST", body: form }));
}

async function uploadOk(key: string, lines: unknown[]): Promise<string> {
  const r = await upload(key, lines);
  expect(r.status).toBe(200);
  return ((await r.json()) as { id: string }).id;
}

/** A JSON value of `depth` nested arrays. */
const nested = (depth: number): unknown => JSON.parse("[".repeat(depth) + "]".repeat(depth));

const json = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

async function createBatch(key: string, fileId: string): Promise<BatchObject> {
  const r = await edge.fetch("/v1/batches", as(key, json({ input_file_id: fileId, endpoint: "/v1/chat/completions", completion_window: "24h" })));
  expect(r.status).toBe(200);
  return (await r.json()) as BatchObject;
}

/** Runs the batch's alarms until it ends (the runtime may run some by itself), within a deadline. */
async function settle(key: string, id: string): Promise<BatchObject> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    await runDurableObjectAlarm(batchStub(env, id));
    const batch = (await (await edge.fetch(`/v1/batches/${id}`, as(key))).json()) as BatchObject;
    if (["completed", "cancelled", "expired", "failed"].includes(batch.status)) return batch;
    if (Date.now() > deadline) throw new Error(`batch ${id} still ${batch.status} after 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function content(key: string, fileId: string): Promise<{ custom_id: string; response: { status_code: number; request_id: string; body: { usage?: { greenference?: { site: string } } } } | null; error: { code: string } | null }[]> {
  const r = await edge.fetch(`/v1/files/${fileId}/content`, as(key));
  expect(r.status).toBe(200);
  return (await r.text()).trim().split("\n").map((l) => JSON.parse(l));
}

describe("Batch API: files", () => {
  it("stores a checked JSONL file its key can read back, and that another key cannot see (404)", async () => {
    const id = await uploadOk(alice, [chatLine("a"), chatLine("b")]);
    const meta = (await (await edge.fetch(`/v1/files/${id}`, as(alice))).json()) as Record<string, unknown>;
    expect(meta).toMatchObject({ id, object: "file", purpose: "batch", filename: "input.jsonl", status: "processed", bytes: expect.any(Number) });
    expect((await (await edge.fetch(`/v1/files/${id}/content`, as(alice))).text()).split("\n")).toHaveLength(2);
    for (const [method, path] of [["GET", `/v1/files/${id}`], ["GET", `/v1/files/${id}/content`], ["DELETE", `/v1/files/${id}`]] as const) {
      const r = await edge.fetch(path, as(bob, { method }));
      expect(r.status, `${method} ${path}`).toBe(404);
    }
    const stolen = await edge.fetch("/v1/batches", as(bob, json({ input_file_id: id, endpoint: "/v1/chat/completions", completion_window: "24h" })));
    expect(stolen.status).toBe(404);
    expect(await errorOf(stolen)).toMatchObject({ param: "input_file_id" });
    expect(await (await edge.fetch(`/v1/files/${id}`, as(alice, { method: "DELETE" }))).json()).toEqual({ id, object: "file", deleted: true });
    expect((await edge.fetch(`/v1/files/${id}`, as(alice))).status).toBe(404);
  });

  it("refuses a bad file with a 400 that names the line, and stores nothing", async () => {
    const cases: [unknown[] | string, RegExp][] = [
      [`${JSON.stringify(chatLine("a"))}\n{oops`, /line 2: not valid JSON/],
      [[chatLine("a"), chatLine("a")], /line 2: custom_id "a" is used by an earlier line/],
      [[chatLine("a"), { ...chatLine("b"), body: { model: MODEL } }], /line 2: 'body.messages'/],
      [[{ ...chatLine("a"), body: { ...chatLine("a").body, stream: true } }], /line 1: 'body.stream' must not be true/],
      [[{ ...chatLine("a"), url: "/v1/embeddings" }], /line 1: 'url'/],
      ["\n\n", /no request lines/],
      // A body nested past a request's 64 levels would reach only code that recurses (storage, RPC).
      [[{ ...chatLine("a"), body: { ...chatLine("a").body, extension: nested(64) } }], /line 1: the request body nests deeper than 64 levels/],
      // Each line is one stored value of its BatchDO, which holds at most 2 MB a value.
      [[chatLine("a"), chatLine("b", "x".repeat(BATCH_LIMITS.lineBytes))], /line 2: a request line may have at most 1048576 bytes/],
    ];
    for (const [lines, message] of cases) {
      const r = await upload(alice, lines);
      expect(r.status).toBe(400);
      expect(await errorOf(r)).toMatchObject({ param: "file", code: "invalid_batch_file", message: expect.stringMatching(message) });
    }
    const wrongPurpose = await upload(alice, [chatLine("a")], "fine-tune");
    expect(await errorOf(wrongPurpose)).toMatchObject({ param: "purpose" });
    const notMultipart = await edge.fetch("/v1/files", as(alice, json({ purpose: "batch" })));
    expect(notMultipart.status).toBe(415);
    expect((await env.FILES.list({ prefix: "files/" })).objects).toEqual([]);
    // As deep as a request may nest (the body's own object is level 1), a line is taken.
    const deepest = await upload(alice, [{ ...chatLine("a"), body: { ...chatLine("a").body, extension: nested(63) } }]);
    expect(deepest.status).toBe(200);
    await edge.fetch(`/v1/files/${((await deepest.json()) as { id: string }).id}`, as(alice, { method: "DELETE" }));
  });
});

describe("Batch API: listing files", () => {
  interface FileList {
    object: string;
    data: { id: string; object: string; purpose: string; created_at: number }[];
    first_id: string | null;
    last_id: string | null;
    has_more: boolean;
  }
  const list = async (key: string, query = ""): Promise<FileList> => {
    const r = await edge.fetch(`/v1/files${query}`, as(key));
    expect(r.status, query).toBe(200);
    return (await r.json()) as FileList;
  };
  /** Uploads `n` files, a few ms apart so each has its own upload time; their ids, oldest first. */
  const uploadSome = async (key: string, n: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      ids.push(await uploadOk(key, [chatLine(`f-${i}`)]));
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    return ids;
  };

  it("lists only the calling key's files, newest first, in OpenAI's list shape; an empty list has null ids", async () => {
    const dave = await createKey("dave");
    const erin = await createKey("erin");
    expect(await list(dave)).toEqual({ object: "list", data: [], first_id: null, last_id: null, has_more: false });
    const ids = await uploadSome(dave, 3);
    const erinId = await uploadOk(erin, [chatLine("e")]);
    const listed = await list(dave);
    expect(listed).toMatchObject({ object: "list", first_id: ids[2], last_id: ids[0], has_more: false });
    expect(listed.data.map((f) => f.id)).toEqual([...ids].reverse());
    expect(listed.data[0]).toEqual(await (await edge.fetch(`/v1/files/${ids[2]}`, as(dave))).json());
    expect((await list(erin)).data.map((f) => f.id)).toEqual([erinId]);
    // A deleted file is no longer listed.
    await edge.fetch(`/v1/files/${ids[1]}`, as(dave, { method: "DELETE" }));
    expect((await list(dave)).data.map((f) => f.id)).toEqual([ids[2], ids[0]]);
  });

  it("orders by order=asc|desc and pages with limit and after in either order", async () => {
    const frank = await createKey("frank");
    const ids = await uploadSome(frank, 5);
    expect((await list(frank, "?order=asc")).data.map((f) => f.id)).toEqual(ids);
    expect((await list(frank, "?order=desc")).data.map((f) => f.id)).toEqual([...ids].reverse());
    for (const [order, expected] of [["asc", ids], ["desc", [...ids].reverse()]] as const) {
      const pages: string[][] = [];
      let after = "";
      for (;;) {
        const page = await list(frank, `?order=${order}&limit=2${after}`);
        pages.push(page.data.map((f) => f.id));
        expect(page.first_id).toBe(page.data[0]!.id);
        expect(page.last_id).toBe(page.data.at(-1)!.id);
        if (!page.has_more) break;
        after = `&after=${page.last_id}`;
      }
      expect(pages, order).toEqual([expected.slice(0, 2), expected.slice(2, 4), expected.slice(4)]);
    }
  });

  it("filters by purpose: batch input files, and the output files the key's batches wrote", async () => {
    const gina = await createKey("gina");
    const input = await uploadOk(gina, [chatLine("p")]);
    const done = await settle(gina, (await createBatch(gina, input)).id);
    expect(done.status).toBe("completed");
    const byPurpose = async (purpose: string) => (await list(gina, `?purpose=${purpose}`)).data.map((f) => f.id);
    expect(await byPurpose("batch")).toEqual([input]);
    expect(await byPurpose("batch_output")).toEqual([done.output_file_id]);
    expect(await byPurpose("fine-tune")).toEqual([]);
    expect((await list(gina)).data.map((f) => f.id)).toEqual([done.output_file_id, input]);
    // The cursor may name a file the filter leaves out: paging goes on from its place.
    expect((await list(gina, `?purpose=batch&after=${done.output_file_id}`)).data.map((f) => f.id)).toEqual([input]);
  });

  it("refuses a bad limit, order or after with a 400 naming the parameter", async () => {
    const hank = await createKey("hank");
    await uploadOk(hank, [chatLine("h")]);
    const cases: [string, string][] = [
      ["?limit=0", "limit"],
      ["?limit=10001", "limit"],
      ["?limit=abc", "limit"],
      ["?limit=1e2", "limit"],
      ["?limit=", "limit"],
      ["?order=newest", "order"],
      ["?after=batch_1", "after"],
      // Well formed, but no file of this key (another key's file is none of its either).
      [`?after=file-${"0".repeat(24)}`, "after"],
      [`?after=${await uploadOk(alice, [chatLine("a")])}`, "after"],
    ];
    for (const [query, param] of cases) {
      const r = await edge.fetch(`/v1/files${query}`, as(hank));
      expect(r.status, query).toBe(400);
      expect(await errorOf(r), query).toMatchObject({ param, type: "invalid_request_error", code: "invalid_value" });
    }
    // OpenAI's largest limit is taken; a page holds at most BATCH_LIMITS.filePage files.
    expect((await list(hank, "?limit=10000")).data).toHaveLength(1);
  });
});

describe("Batch API: batches", () => {

  it("runs every line once through the sites and writes one answer per line, in order; another key sees no batch", async () => {
    const lines = Array.from({ length: 9 }, (_, i) => chatLine(`req-${i}`, `question ${i}`));
    const created = await createBatch(alice, await uploadOk(alice, lines));
    expect(created).toMatchObject({ object: "batch", status: "validating", completion_window: "24h", request_counts: { total: 9, completed: 0, failed: 0 } });
    expect(created.expires_at - created.created_at).toBe(24 * 3600);
    expect((await edge.fetch(`/v1/batches/${created.id}`, as(bob))).status).toBe(404);
    expect((await edge.fetch(`/v1/batches/${created.id}/cancel`, as(bob, { method: "POST" }))).status).toBe(404);

    const done = await settle(alice, created.id);
    expect(done).toMatchObject({ status: "completed", request_counts: { total: 9, completed: 9, failed: 0 }, error_file_id: null, output_file_id: expect.stringMatching(/^file-/) });
    expect(done.in_progress_at).not.toBeNull();
    expect(done.finalizing_at).not.toBeNull();
    // OpenAI documents no error for cancelling an ended batch: it is answered as it is.
    const cancelDone = await edge.fetch(`/v1/batches/${done.id}/cancel`, as(alice, { method: "POST" }));
    expect(cancelDone.status).toBe(200);
    expect(await cancelDone.json()).toEqual(done);
    const output = await content(alice, done.output_file_id!);
    expect(output.map((l) => l.custom_id)).toEqual(lines.map((l) => l.custom_id));
    expect(output.every((l) => l.response?.status_code === 200 && /^req_/.test(l.response.request_id) && l.error === null)).toBe(true);
    // Each line's settled receipt is kept under its request_id, for its key only.
    const line = output[0]!.response!;
    const receipt = await edge.fetch(`/v1/usage/receipts/${line.request_id}`, as(alice));
    expect(receipt.status).toBe(200);
    expect(await receipt.json()).toMatchObject({ id: line.request_id, stream: false, ending: "complete", receipt: line.body.usage!.greenference! });
    expect((await edge.fetch(`/v1/usage/receipts/${line.request_id}`, as(bob))).status).toBe(404);
    expect((await edge.fetch(`/v1/files/${done.output_file_id}/content`, as(bob))).status).toBe(404);
    // Batch lines go to the sites as ordinary signed requests of the class the edge classified.
    const sent = edge.sites.calls.filter((c) => JSON.stringify(c.body).includes("question"));
    expect(new Set(sent.map((c) => c.body.messages && (c.body.messages as { content: string }[])[0]!.content)).size).toBe(9);
  });

  it("lists a key's batches newest first with limit and after", async () => {
    const file = await uploadOk(bob, [chatLine("x")]);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await createBatch(bob, file)).id);
    const first = (await (await edge.fetch("/v1/batches?limit=2", as(bob))).json()) as { data: BatchObject[]; has_more: boolean; last_id: string };
    expect(first.data.map((b) => b.id)).toEqual([ids[2], ids[1]]);
    expect(first.has_more).toBe(true);
    const rest = (await (await edge.fetch(`/v1/batches?limit=2&after=${first.last_id}`, as(bob))).json()) as { data: BatchObject[]; has_more: boolean };
    expect(rest.data.map((b) => b.id)).toEqual([ids[0]]);
    expect(rest.has_more).toBe(false);
    expect((await edge.fetch("/v1/batches?limit=0", as(bob))).status).toBe(400);
    for (const id of ids) await settle(bob, id);
  });

  it("refuses a batch whose endpoint or window is wrong, naming the parameter", async () => {
    const file = await uploadOk(alice, [chatLine("x")]);
    const body = { input_file_id: file, endpoint: "/v1/chat/completions", completion_window: "24h" };
    for (const [over, param] of [[{ completion_window: "1h" }, "completion_window"], [{ endpoint: "/v1/completions" }, "endpoint"], [{ endpoint: "/v1/embeddings" }, "endpoint"]] as const) {
      const r = await edge.fetch("/v1/batches", as(alice, json({ ...body, ...over })));
      expect(r.status).toBe(400);
      expect((await errorOf(r)).param).toBe(param);
    }
  });

  it("bounds a key's running batches: one past BATCHES_MAX_ACTIVE_PER_KEY gets 429 batch_quota_exceeded with Retry-After and is not created; once one ends another may be, and an ended batch keeps no lines", async () => {
    const two = { ...testEnv, BATCHES_MAX_ACTIVE_PER_KEY: "2" };
    const carol = await createKey("carol");
    const file = await uploadOk(carol, [chatLine("q-0"), chatLine("q-1")]);
    const create = () => edge.fetch("/v1/batches", as(carol, json({ input_file_id: file, endpoint: "/v1/chat/completions", completion_window: "24h" })), two);
    const running: BatchObject[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await create();
      expect(r.status).toBe(200);
      running.push((await r.json()) as BatchObject);
    }
    const refused = await create();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await errorOf(refused)).toMatchObject({ code: "batch_quota_exceeded", type: "rate_limit_error", param: "input_file_id" });
    const listed = (await (await edge.fetch("/v1/batches?limit=10", as(carol))).json()) as { data: BatchObject[] };
    expect(listed.data.map((b) => b.id).sort()).toEqual(running.map((b) => b.id).sort());
    // Another key is not held back by carol's batches.
    expect((await edge.fetch("/v1/batches", as(bob, json({ input_file_id: await uploadOk(bob, [chatLine("b")]), endpoint: "/v1/chat/completions", completion_window: "24h" })), two)).status).toBe(200);

    const done = await settle(carol, running[0]!.id);
    expect(done.status).toBe("completed");
    expect((await content(carol, done.output_file_id!)).map((l) => l.custom_id)).toEqual(["q-0", "q-1"]);
    const stored = await runInDurableObject(batchStub(env, done.id), async (_, state) => [...(await state.storage.list()).keys()]);
    expect(stored.filter((k) => k.startsWith("line:") || k.startsWith("answer:"))).toEqual([]);
    const again = await create();
    expect(again.status).toBe(200);
    for (const b of [running[1]!, (await again.json()) as BatchObject]) await settle(carol, b.id);
  });

  it("cancels: the batch ends cancelled with the answers it had, and a cancelled batch stays so", async () => {
    const created = await createBatch(alice, await uploadOk(alice, Array.from({ length: 30 }, (_, i) => chatLine(`c-${i}`))));
    const cancelling = (await (await edge.fetch(`/v1/batches/${created.id}/cancel`, as(alice, { method: "POST" }))).json()) as BatchObject;
    expect(["cancelling", "cancelled"]).toContain(cancelling.status);
    const done = await settle(alice, created.id);
    expect(done.status).toBe("cancelled");
    expect(done.cancelled_at).not.toBeNull();
    expect(done.request_counts.completed).toBeLessThan(30);
    const answered = done.output_file_id ? await content(alice, done.output_file_id) : [];
    expect(answered).toHaveLength(done.request_counts.completed);
    expect(((await (await edge.fetch(`/v1/batches/${created.id}/cancel`, as(alice, { method: "POST" }))).json()) as BatchObject).status).toBe("cancelled");
  });

  it("a round that finds its batch ended by another run of the alarm counts nothing over the written files and keeps no lines", async () => {
    // Every site holds its answers until the batch is cancelled and finalized by a second run.
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let held = 0;
    let answered = 0;
    for (const site of ["eu-a", "eu-b", "us-c"]) edge.sites.on(site, async () => (held++, await gate, answered++, completion()));
    const created = await createBatch(alice, await uploadOk(alice, Array.from({ length: 6 }, (_, i) => chatLine(`r-${i}`, `race ${i}`))));
    const first = runDurableObjectAlarm(batchStub(env, created.id));
    const deadline = Date.now() + 10_000;
    while (held === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(held).toBeGreaterThan(0);
    await edge.fetch(`/v1/batches/${created.id}/cancel`, as(alice, { method: "POST" }));
    const cancelled = await settle(alice, created.id);
    expect(cancelled.status).toBe("cancelled");
    open();
    await first;
    // The held round may be the runtime's own run of the alarm, not `first`, so it can end after
    // `first` has: let every held answer reach it, then give it time to store them and end.
    for (const until = Date.now() + 5_000; answered < held && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stored = await runInDurableObject(batchStub(env, created.id), async (_, state) => [...(await state.storage.list()).keys()]);
    expect(stored.filter((k) => k.startsWith("line:") || k.startsWith("answer:"))).toEqual([]);
    const after = (await (await edge.fetch(`/v1/batches/${created.id}`, as(alice))).json()) as BatchObject;
    expect(after.status).toBe("cancelled");
    expect(after.request_counts).toEqual(cancelled.request_counts);
    for (const site of ["eu-a", "eu-b", "us-c"]) edge.sites.on(site, () => completion());
  });

  it("re-runs the lines of a site that died mid-batch elsewhere, and writes each line once", async () => {
    // eu-a holds its answers until the test has taken it down, then breaks each one after its head.
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const broken: string[] = [];
    edge.sites.on("eu-a", async (call) => {
      broken.push(JSON.stringify(call.body.messages));
      await gate;
      const body = new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode('{"id":')), c.error(new Error("site died"))) });
      return new Response(body, { headers: { "content-type": "application/json" } });
    });
    const lines = Array.from({ length: 10 }, (_, i) => chatLine(`d-${i}`, `death ${i}`));
    const created = await createBatch(alice, await uploadOk(alice, lines));
    const round = runDurableObjectAlarm(batchStub(env, created.id));
    const deadline = Date.now() + 10_000;
    while (broken.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(broken.length).toBeGreaterThan(0);
    await takeDown("eu-a");
    open();
    await round;
    const done = await settle(alice, created.id);
    expect(done.request_counts).toEqual({ total: 10, completed: 10, failed: 0 });
    const output = await content(alice, done.output_file_id!);
    expect(output.map((l) => l.custom_id)).toEqual(lines.map((l) => l.custom_id));
    expect(output.every((l) => l.response!.body.usage!.greenference!.site !== "eu-a")).toBe(true);
    edge.sites.on("eu-a", () => completion());
    await env.SITE.get(env.SITE.idFromName("eu-a")).heartbeat(telemetry("eu-a"));
  });
});
