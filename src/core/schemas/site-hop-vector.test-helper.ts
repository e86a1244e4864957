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
  headers: { "x-greenference-class": "SS", "x-greenference-instance": "i0", "x-greenference-plan": "7", "x-greenference-slo": "ttft=500;tbt=50" } as Record<string, string>,
  bodySha256Hex: "798d46639491d6c18f1779ddfca7da4b672f23a4cb57d66eeae48d9b8ccb6075",
  signatureHex: "47c521d7f49005557faece1ffb719aa0d7028483144a9be4da01f1d8d4e4700a",
} as const;
