/**
 * One signed request computed outside the project (Python's hmac and hashlib), which both HMAC
 * implementations must reproduce: Web Crypto at the edge (test/worker/site-signing.test.ts) and
 * node:crypto at the site (host-agent/gateway/ingress-auth.test.ts).
 */
export const SITE_HOP_VECTOR = {
  secret: `gfi_${"ab".repeat(32)}`,
  method: "POST",
  path: "/v1/chat/completions",
  timestampMs: 1_700_000_000_000,
  nonce: "0123456789abcdef0123456789abcdef",
  body: '{"model":"m","messages":[{"role":"user","content":"hi"}]}',
  headers: { "x-greenference-class": "SS", "x-greenference-instance": "i0", "x-greenference-plan": "7" } as Record<string, string>,
  bodySha256Hex: "798d46639491d6c18f1779ddfca7da4b672f23a4cb57d66eeae48d9b8ccb6075",
  signatureHex: "6d21c4c8280c726e77a8f9df15b221aae293c26170a28a3098b596ef70cc09fb",
} as const;
