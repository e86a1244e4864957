import { keyLimiter } from "../../../durable-objects/rate-limiter-do.ts";
import { fileQuota, type FileQuota } from "../../edge/file-index.ts";
import { openAiError } from "../openai-error.ts";

/**
 * Indexes upload `id` (`bytes` bytes) of `owner` if the key's files stay within its quota with it:
 * null when it did, else a 429 `file_quota_exceeded` that says what to delete (waiting does not
 * help, so no Retry-After). The count and the index entry are one step in the key's RateLimiterDO,
 * so of uploads at once exactly those that fit are admitted, and a refusal indexes nothing.
 */
export async function admitUpload(env: Env, owner: string, id: string, bytes: number): Promise<Response | null> {
  const quota = fileQuota(env);
  const { admitted, use } = await keyLimiter(env, owner).admitFile(owner, id, bytes, quota);
  return admitted ? null : quotaExceeded(quota, use);
}

/** The 429 for an upload that would take the key to `use` (counting it), past `quota`. */
function quotaExceeded(quota: FileQuota, use: FileQuota): Response {
  const holds = use.files > quota.files ? `more than ${quota.files} files` : `${use.bytes} bytes`;
  return openAiError(429, `This API key's files would exceed its quota of ${quota.files} files and ${quota.bytes} bytes (it holds ${holds} with this one). Delete files it no longer needs (DELETE /v1/files/{id}) and upload again.`, { param: "file", code: "file_quota_exceeded" });
}
