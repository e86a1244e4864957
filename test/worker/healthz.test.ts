import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";

describe("edge Worker", () => {
  it("answers /healthz", async () => {
    const res = await SELF.fetch("https://edge.test/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  it("answers HEAD as GET without the body (405 where GET is not served)", async () => {
    const res = await SELF.fetch("https://edge.test/healthz", { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toMatch(/\S/);
    expect(await res.text()).toBe("");
    const post = await SELF.fetch("https://edge.test/v1/chat/completions", { method: "HEAD" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("POST");
  });

  it("answers an unknown route with the OpenAI error shape and 404", async () => {
    const res = await SELF.fetch("https://edge.test/v1/nope");
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { message: string; type: string; code: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.code).toBe("not_found");
    expect(body.error.message).toContain("/v1/nope");
  });
});
