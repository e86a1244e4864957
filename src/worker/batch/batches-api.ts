import type { IRequest, RouterType } from "itty-router";
import { batchStub } from "../../../durable-objects/batch-do.ts";
import { deferralSlotMs } from "../../../durable-objects/deferral-do.ts";
import { keyLimiter } from "../../../durable-objects/rate-limiter-do.ts";
import { BATCH_LIMITS, CreateBatchRequest, type BatchObject } from "../../core/schemas/batch.ts";
import { bodyIdleTimeoutMs } from "../../edge/env.ts";
import type { EdgeContext } from "../inference.ts";
import { parseBody, readJson } from "../json-body.ts";
import { openAiError } from "../openai-error.ts";
import { checkBatchFile } from "./batch-file.ts";
import { listPage, listQuery } from "./list-query.ts";
import { callerOwner } from "./files-api.ts";
import { activeBatchQuota, markBatchEnded } from "../../edge/active-batches.ts";
import { fileQuota, fileUse, type FileQuota } from "../../edge/file-index.ts";
import { fileKey, hex, ownedFile } from "../../edge/stored-files.ts";

const BATCH_ID = /^batch_[0-9a-f]{27}$/;
/** OpenAI's bounds for listing batches: 20 a page unless asked, at most 100. */
const BATCH_LIST = { defaultLimit: 20, maxLimit: BATCH_LIMITS.listLimit, afterId: BATCH_ID, afterWhat: "a batch id" };
/** Far enough ahead that `LATEST - now` keeps 11 hex digits for centuries. */
const LATEST_MS = 0xfffffffffff;

/** A new batch id: newest sorts first (the time part counts down), then random. */
function newBatchId(nowMs: number): string {
  return `batch_${(LATEST_MS - nowMs).toString(16).padStart(11, "0")}${hex(8)}`;
}

/** Batches are listed per owner from an R2 index of empty objects, `batch-index/<owner>/<id>`, newest first. */
const indexKey = (owner: string, id: string) => `batch-index/${owner}/${id}`;

const notFound = (id: string) => openAiError(404, `No such Batch object: ${id.slice(0, 64)}`, { param: "batch_id", code: "not_found" });

/**
 * 429 `file_quota_exceeded` when the key's files already fill its file quota. A batch always writes
 * its output and error files, so without this a key could grow its files without end by creating
 * batches from one input file; with it, at most two per batch admitted (BATCHES_MAX_ACTIVE_PER_KEY)
 * go past the quota.
 */
async function noRoomForOutputs(bucket: R2Bucket, owner: string, quota: FileQuota): Promise<Response | null> {
  const use = await fileUse(bucket, owner, quota);
  if (use.files < quota.files && use.bytes < quota.bytes) return null;
  return openAiError(429, `This API key's files fill its quota of ${quota.files} files and ${quota.bytes} bytes, and a batch writes its output and error files. Delete files it no longer needs (DELETE /v1/files/{id}) and create this batch again.`, { param: "input_file_id", code: "file_quota_exceeded" });
}

/** 429 `batch_quota_exceeded`: the key has `quota` batches that have not ended. */
function quotaExceeded(env: Env, quota: number): Response {
  const response = openAiError(429, `This API key already has ${quota} batches that have not ended, its most. Wait for one to complete, or cancel one (POST /v1/batches/{id}/cancel), and create this batch again.`, { param: "input_file_id", code: "batch_quota_exceeded" });
  // A batch ends at the earliest when the deferral scheduler next releases lines.
  response.headers.set("retry-after", String(Math.ceil(deferralSlotMs(env) / 1000)));
  return response;
}

/** The Batch API: create, retrieve, list (limit/after), cancel. Batches are their owners' only. */
export function addBatchRoutes(router: RouterType, edge: EdgeContext): void {
  router.post("/v1/batches", async (request: IRequest, env: Env) => {
    const owner = await callerOwner(request, env, edge);
    if (owner instanceof Response) return owner;
    const raw = await readJson(request, 64 * 1024, bodyIdleTimeoutMs(env));
    if (!raw.ok) return raw.response;
    const parsed = parseBody(CreateBatchRequest, raw.value);
    if (!parsed.ok) return parsed.response;
    const body = parsed.value;
    const file = await ownedFile(env.FILES, body.input_file_id, owner);
    if (!file || file.meta.purpose !== "batch") return openAiError(404, `No batch input file ${body.input_file_id.slice(0, 64)}`, { param: "input_file_id", code: "not_found" });
    if (file.meta.endpoint !== body.endpoint) {
      return openAiError(400, `The input file's lines call ${file.meta.endpoint || "both endpoints"}, not ${body.endpoint}; a batch runs one endpoint.`, { param: "endpoint", code: "invalid_value" });
    }
    const content = await env.FILES.get(fileKey(body.input_file_id));
    if (!content) return openAiError(404, `No batch input file ${body.input_file_id.slice(0, 64)}`, { param: "input_file_id", code: "not_found" });
    const checked = checkBatchFile(new Uint8Array(await content.arrayBuffer()));
    if (!checked.ok) return openAiError(400, `Invalid batch file: ${checked.message}`, { param: "input_file_id", code: "invalid_batch_file" });
    const noRoom = await noRoomForOutputs(env.FILES, owner, fileQuota(env));
    if (noRoom) return noRoom;
    const nowMs = Date.now();
    const id = newBatchId(nowMs);
    const quota = activeBatchQuota(env);
    try {
      if (!(await keyLimiter(env, owner).admitBatch(owner, id, quota))) return quotaExceeded(env, quota);
      const created = await batchStub(env, id).create(id, owner, body, checked.lines, nowMs);
      await env.FILES.put(indexKey(owner, id), "");
      return Response.json(created);
    } catch (error) {
      // The mark (if written) goes now: a batch whose creation failed never ends to delete it.
      await markBatchEnded(env.FILES, owner, id);
      throw error;
    }
  });

  router.get("/v1/batches", async (request: IRequest, env: Env) => {
    const owner = await callerOwner(request, env, edge);
    if (owner instanceof Response) return owner;
    const query = listQuery(new URL(request.url).searchParams, BATCH_LIST);
    if (query instanceof Response) return query;
    const { limit, after } = query;
    const listed = await env.FILES.list({ prefix: `batch-index/${owner}/`, limit: limit + 1, ...(after ? { startAfter: indexKey(owner, after) } : {}) });
    const ids = listed.objects.map((o) => o.key.slice(`batch-index/${owner}/`.length));
    const data = (await Promise.all(ids.slice(0, limit).map((id) => batchStub(env, id).get(owner)))).filter((b): b is BatchObject => b !== null);
    return listPage(data, ids.length > limit);
  });

  router.get("/v1/batches/:id", async (request: IRequest, env: Env) => {
    const owner = await callerOwner(request, env, edge);
    if (owner instanceof Response) return owner;
    const id = request.params.id!;
    const batch = BATCH_ID.test(id) ? await batchStub(env, id).get(owner) : null;
    return batch ? Response.json(batch) : notFound(id);
  });

  router.post("/v1/batches/:id/cancel", async (request: IRequest, env: Env) => {
    const owner = await callerOwner(request, env, edge);
    if (owner instanceof Response) return owner;
    const id = request.params.id!;
    const batch = BATCH_ID.test(id) ? await batchStub(env, id).cancel(owner, Date.now()) : null;
    return batch ? Response.json(batch) : notFound(id);
  });
}
