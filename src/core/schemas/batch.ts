import { z } from "zod";

/** The endpoints a batch may run (OpenAI's Batch API also has embeddings and responses; the edge serves these two). */
export const BATCH_ENDPOINTS = ["/v1/chat/completions", "/v1/completions"] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];

/** Bounds on what a caller can make the edge store and run. */
export const BATCH_LIMITS = {
  /** Bytes of one uploaded file. */
  fileBytes: 16 * 1024 * 1024,
  /** Request lines of one file (OpenAI allows 50,000; each is a stored request here). */
  lines: 5_000,
  /** Bytes of one request line: each is one stored value of its BatchDO, which holds at most 2 MB a value. */
  lineBytes: 1024 * 1024,
  customIdChars: 512,
  metadataPairs: 16,
  metadataKeyChars: 64,
  metadataValueChars: 512,
  /** Batches one page of GET /v1/batches lists. */
  listLimit: 100,
  /** Files one page of GET /v1/files lists, whatever larger `limit` (OpenAI's default and most: 10,000) it asks. */
  filePage: 100,
} as const;

/** One line of a batch input file: a request to one of BATCH_ENDPOINTS. Its body is checked with that endpoint's schema. */
export const BatchLine = z.strictObject({
  custom_id: z.string().min(1).max(BATCH_LIMITS.customIdChars),
  method: z.literal("POST"),
  url: z.enum(BATCH_ENDPOINTS),
  body: z.record(z.string(), z.unknown()),
});
export type BatchLine = z.infer<typeof BatchLine>;

/** `POST /v1/batches`. */
export const CreateBatchRequest = z.object({
  input_file_id: z.string().min(1).max(64),
  endpoint: z.enum(BATCH_ENDPOINTS),
  completion_window: z.literal("24h"),
  metadata: z
    .record(z.string().max(BATCH_LIMITS.metadataKeyChars), z.string().max(BATCH_LIMITS.metadataValueChars))
    .refine((m) => Object.keys(m).length <= BATCH_LIMITS.metadataPairs, `at most ${BATCH_LIMITS.metadataPairs} metadata pairs`)
    .nullish(),
});
export type CreateBatchRequest = z.infer<typeof CreateBatchRequest>;

export const BATCH_STATUSES = ["validating", "failed", "in_progress", "finalizing", "completed", "expired", "cancelling", "cancelled"] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** OpenAI's batch object, as GET /v1/batches/{id} answers it. */
export interface BatchObject {
  id: string;
  object: "batch";
  endpoint: BatchEndpoint;
  errors: { object: "list"; data: { code: string; message: string; param: string | null; line: number | null }[] } | null;
  input_file_id: string;
  completion_window: "24h";
  status: BatchStatus;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
}
