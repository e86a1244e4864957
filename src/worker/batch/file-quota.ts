import { fileUse, type FileQuota } from "../../edge/file-index.ts";
import { openAiError } from "../openai-error.ts";

/**
 * null while an owner's files are within the quota (the file just stored counted), else a 429
 * `file_quota_exceeded` that says what to delete; waiting does not help, so no Retry-After.
 * Checked after the file is stored, so two uploads at once cannot both slip past it.
 */
export async function overQuota(bucket: R2Bucket, owner: string, quota: FileQuota): Promise<Response | null> {
  const use = await fileUse(bucket, owner, quota);
  if (use.files <= quota.files && use.bytes <= quota.bytes) return null;
  return openAiError(429, `This API key's files would exceed its quota of ${quota.files} files and ${quota.bytes} bytes (it holds ${use.files > quota.files ? `more than ${quota.files} files` : `${use.bytes} bytes`} with this one). Delete files it no longer needs (DELETE /v1/files/{id}) and upload again.`, { param: "file", code: "file_quota_exceeded" });
}
