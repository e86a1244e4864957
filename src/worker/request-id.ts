/** An id for one answer (`x-request-id`, and `request_id` in batch output lines): `req_` and 24 random hex digits. */
export function newRequestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `req_${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}
