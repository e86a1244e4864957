import type { IRequest, RouterType } from "itty-router";
import { BATCH_LIMITS } from "../../core/schemas/batch.ts";
import { authenticateCaller } from "../auth.ts";
import { ANONYMOUS } from "../../edge/identity.ts";
import { bodyIdleTimeoutMs } from "../../edge/env.ts";
import type { EdgeContext } from "../inference.ts";
import { readBounded, unreadBodyError } from "../json-body.ts";
import { openAiError } from "../openai-error.ts";
import { checkBatchFile } from "./batch-file.ts";
import { deleteFile } from "../../edge/file-index.ts";
import { admitUpload } from "./file-quota.ts";
import { listFiles } from "./file-list.ts";
import { fileKey, fileObject, newFileId, ownedFile, putFile } from "../../edge/stored-files.ts";

/** Room for the multipart framing and the purpose field around the file. */
const MULTIPART_OVERHEAD = 64 * 1024;

/** The owner of what a caller makes: its key id, or "anonymous" while the API is open. */
export async function callerOwner(request: Request, env: Env, edge: EdgeContext): Promise<string | Response> {
  const { snapshot } = await edge.cache.get(env);
  const caller = await authenticateCaller(request, env, snapshot.apiKeys);
  if (!caller.ok) return caller.response;
  return caller.keyId ?? ANONYMOUS;
}

const notFound = (id: string) => openAiError(404, `No such File object: ${id.slice(0, 64)}`, { param: "id", code: "not_found" });

/** The Files API for batch input and output: upload (checked line by line), list, retrieve, content, delete. */
export function addFileRoutes(router: RouterType, edge: EdgeContext): void {
  router.post("/v1/files", async (request: IRequest, env: Env) => {
    const owner = await callerOwner(request, env, edge);
    if (owner instanceof Response) return owner;
    return upload(request, env, owner);
  });
  router.get("/v1/files", async (request: IRequest, env: Env) => {
    const owner = await callerOwner(request, env, edge);
    if (owner instanceof Response) return owner;
    return listFiles(new URL(request.url).searchParams, env.FILES, owner);
  });
  router.get("/v1/files/:id", async (request: IRequest, env: Env) => {
    const owner = await callerOwner(request, env, edge);
    if (owner instanceof Response) return owner;
    const file = await ownedFile(env.FILES, request.params.id!, owner);
    return file ? Response.json(fileObject(request.params.id!, file.object)) : notFound(request.params.id!);
  });
  router.get("/v1/files/:id/content", async (request: IRequest, env: Env) => {
    const owner = await callerOwner(request, env, edge);
    if (owner instanceof Response) return owner;
    const file = await ownedFile(env.FILES, request.params.id!, owner);
    const body = file ? await env.FILES.get(fileKey(request.params.id!)) : null;
    return body ? new Response(body.body, { headers: { "content-type": "application/jsonl" } }) : notFound(request.params.id!);
  });
  router.delete("/v1/files/:id", async (request: IRequest, env: Env) => {
    const owner = await callerOwner(request, env, edge);
    if (owner instanceof Response) return owner;
    const id = request.params.id!;
    const file = await ownedFile(env.FILES, id, owner);
    if (!file) return notFound(id);
    await deleteFile(env.FILES, owner, id, file.object.size);
    return Response.json({ id, object: "file", deleted: true });
  });
}

/** `POST /v1/files`: multipart with `purpose=batch` and `file`, a JSONL file of request lines, each checked. */
async function upload(request: Request, env: Env, owner: string): Promise<Response> {
  const type = request.headers.get("content-type") ?? "";
  if (!type.toLowerCase().startsWith("multipart/form-data")) {
    await request.body?.cancel();
    return openAiError(415, "Upload a file as multipart/form-data with the fields 'purpose' and 'file'.", { code: "unsupported_media_type" });
  }
  const body = await readBounded(request, BATCH_LIMITS.fileBytes + MULTIPART_OVERHEAD, bodyIdleTimeoutMs(env));
  if (!body.ok && body.why === "too_large") return openAiError(413, `A batch file may have at most ${BATCH_LIMITS.fileBytes} bytes.`, { param: "file", code: "file_too_large" });
  if (!body.ok) return unreadBodyError(body, BATCH_LIMITS.fileBytes);
  const bytes = body.bytes;
  let form: FormData;
  try {
    form = await new Response(bytes, { headers: { "content-type": type } }).formData();
  } catch {
    return openAiError(400, "The multipart body could not be parsed.", { code: "invalid_multipart" });
  }
  const purpose = form.get("purpose");
  if (purpose !== "batch") return openAiError(400, `Only purpose "batch" is supported${typeof purpose === "string" ? `, not "${purpose.slice(0, 32)}"` : ""}.`, { param: "purpose", code: "invalid_value" });
  // workers-types types FormData values as strings; a file part is a File.
  const file = form.get("file") as unknown as File | string | null;
  if (file === null || typeof file === "string") return openAiError(400, "The 'file' field must be a file.", { param: "file", code: "invalid_value" });
  const content = new Uint8Array(await file.arrayBuffer());
  if (content.byteLength > BATCH_LIMITS.fileBytes) return openAiError(413, `A batch file may have at most ${BATCH_LIMITS.fileBytes} bytes.`, { param: "file", code: "file_too_large" });
  const checked = checkBatchFile(content);
  if (!checked.ok) return openAiError(400, `Invalid batch file: ${checked.message}`, { param: "file", code: "invalid_batch_file" });
  const id = newFileId();
  try {
    // Stored, then admitted: a refusal deletes it before answering. An edge that dies in between
    // leaves a file no index lists and no client was told of, not an index entry that holds the
    // key's room with no file its owner could delete.
    const stored = await putFile(env.FILES, id, content, { owner, purpose: "batch", filename: (file.name || "batch.jsonl").slice(0, 256), createdAt: Math.floor(Date.now() / 1000), endpoint: checked.endpoint ?? "", lines: checked.lines.length });
    const refused = await admitUpload(env, owner, id, stored.size);
    if (!refused) return Response.json(fileObject(id, stored));
    await deleteFile(env.FILES, owner, id, stored.size);
    return refused;
  } catch (error) {
    await deleteFile(env.FILES, owner, id, content.byteLength);
    throw error;
  }
}
