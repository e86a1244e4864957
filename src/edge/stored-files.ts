/**
 * Files of the Batch API in R2 (binding FILES), one object per file under `files/<id>`, with who
 * owns it and what it is in the object's custom metadata. Only the key that made a file (or the
 * batch that wrote it for that key) sees it; to any other caller it does not exist.
 */

export type FilePurpose = "batch" | "batch_output";

export interface FileMeta {
  /** The API key id that owns the file ("anonymous" while the API is open and no key was sent). */
  owner: string;
  purpose: FilePurpose;
  filename: string;
  /** Unix seconds. */
  createdAt: number;
  /** The endpoint all request lines call ("" when mixed; output files: ""). */
  endpoint: string;
  /** Request lines (input files) or answer lines (output files). */
  lines: number;
}

/** OpenAI's file object. */
export interface FileObject {
  id: string;
  object: "file";
  bytes: number;
  created_at: number;
  filename: string;
  purpose: FilePurpose;
  status: "processed";
  expires_at: null;
}

export const fileKey = (id: string) => `files/${id}`;

export const FILE_ID = /^file-[0-9a-f]{24}$/;

export function newFileId(): string {
  return `file-${hex(12)}`;
}

export function hex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");
}

function metaOf(object: R2Object): FileMeta {
  const m = object.customMetadata ?? {};
  return { owner: m.owner ?? "", purpose: (m.purpose ?? "batch") as FilePurpose, filename: m.filename ?? "", createdAt: Number(m.createdAt ?? 0), endpoint: m.endpoint ?? "", lines: Number(m.lines ?? 0) };
}

export function fileObject(id: string, object: R2Object): FileObject {
  const meta = metaOf(object);
  return { id, object: "file", bytes: object.size, created_at: meta.createdAt, filename: meta.filename, purpose: meta.purpose, status: "processed", expires_at: null };
}

/** The file's R2 object and metadata when `owner` owns it; null when it does not exist or is another key's. */
export async function ownedFile(bucket: R2Bucket, id: string, owner: string): Promise<{ object: R2Object; meta: FileMeta } | null> {
  if (!FILE_ID.test(id)) return null;
  const object = await bucket.head(fileKey(id));
  if (!object) return null;
  const meta = metaOf(object);
  return meta.owner === owner ? { object, meta } : null;
}

export async function putFile(bucket: R2Bucket, id: string, body: string | Uint8Array, meta: FileMeta): Promise<R2Object> {
  const customMetadata: Record<string, string> = { owner: meta.owner, purpose: meta.purpose, filename: meta.filename, createdAt: String(meta.createdAt), endpoint: meta.endpoint, lines: String(meta.lines) };
  return bucket.put(fileKey(id), body, { customMetadata, httpMetadata: { contentType: "application/jsonl" } });
}
