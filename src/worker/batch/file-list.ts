import { BATCH_LIMITS } from "../../core/schemas/batch.ts";
import { indexedFileIds } from "../../edge/file-index.ts";
import { FILE_ID, fileObject, ownedFile, type FileObject } from "../../edge/stored-files.ts";
import { openAiError } from "../openai-error.ts";
import { listOrder, listPage, listQuery, type ListOrder } from "./list-query.ts";

/** OpenAI's bounds for listing files: `limit` from 1 to 10,000, 10,000 when absent (pages hold BATCH_LIMITS.filePage). */
const FILE_LIST = { defaultLimit: 10_000, maxLimit: 10_000, afterId: FILE_ID, afterWhat: "a file id" };

interface ListedFile {
  file: FileObject;
  /** When R2 stored it, in ms: orders files made in the same second. */
  uploadedMs: number;
}

/**
 * `GET /v1/files?purpose=&limit=&order=&after=`: the owner's files by `created_at` (newest first
 * unless `order=asc`), after the file `after` names, those of `purpose` only when it is given.
 * A key holds few files (FILES_MAX_PER_KEY, plus its batches' outputs), so all are read and sorted
 * here; ids are random, so no storage order could serve as the cursor.
 */
export async function listFiles(query: URLSearchParams, bucket: R2Bucket, owner: string): Promise<Response> {
  const page = listQuery(query, FILE_LIST);
  if (page instanceof Response) return page;
  const order = listOrder(query);
  if (order instanceof Response) return order;
  const purpose = query.get("purpose");
  const files = await ownerFilesInOrder(bucket, owner, order);
  let start = 0;
  if (page.after !== null) {
    start = files.findIndex((f) => f.id === page.after) + 1;
    // Paging on from a file this key no longer has (or never had) has no place to start.
    if (start === 0) return openAiError(400, `after names no file of this API key: ${page.after}`, { param: "after", code: "invalid_value" });
  }
  const rest = files.slice(start).filter((f) => purpose === null || f.purpose === purpose);
  const size = Math.min(page.limit, BATCH_LIMITS.filePage);
  return listPage(rest.slice(0, size), rest.length > size);
}

/** All the owner's files, ordered by created_at, then upload time, then id (so the order is total and a cursor is stable). */
async function ownerFilesInOrder(bucket: R2Bucket, owner: string, order: ListOrder): Promise<FileObject[]> {
  const ids = await indexedFileIds(bucket, owner);
  const found = await Promise.all(ids.map((id) => listedFile(bucket, id, owner)));
  const files = found.filter((f): f is ListedFile => f !== null);
  files.sort((a, b) => a.file.created_at - b.file.created_at || a.uploadedMs - b.uploadedMs || (a.file.id < b.file.id ? -1 : 1));
  if (order === "desc") files.reverse();
  return files.map((f) => f.file);
}

/** The file and its upload time; null when its index entry outlived it (deleted meanwhile). */
async function listedFile(bucket: R2Bucket, id: string, owner: string): Promise<ListedFile | null> {
  const owned = await ownedFile(bucket, id, owner);
  return owned ? { file: fileObject(id, owned.object), uploadedMs: owned.object.uploaded.getTime() } : null;
}
