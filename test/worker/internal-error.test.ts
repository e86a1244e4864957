import { describe, expect, it, vi } from "vitest";
import { chatBody, Edge, errorOf } from "./edge-fixture.ts";

describe("an error nothing handled", () => {
  it("answers a client 500 in OpenAI's words with its request id, and names no internals", async () => {
    const broken = { predictBin: () => { throw new Error("SQLITE_TOOBIG in predictor row 42"); }, observe: () => {} };
    const edge = new Edge({ predictor: broken });
    await edge.setUp(1);
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const r = await edge.chat(chatBody({ max_tokens: undefined }));
      expect(r.status).toBe(500);
      expect(r.headers.get("x-request-id")).toMatch(/\S/);
      const error = await errorOf(r);
      expect(error).toMatchObject({ type: "server_error", code: "internal_error" });
      expect(error.message).not.toContain("SQLITE");
      // The operator finds it in the log.
      expect(logged.mock.calls.flat().some((a) => a instanceof Error && a.message.includes("SQLITE_TOOBIG"))).toBe(true);
    } finally {
      logged.mockRestore();
    }
  });
});
