import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("greenference start --smoke --json", () => {
  it("runs the main job on its defaults for a bounded time: nothing lost, traffic at several sites, power binding some site's plan", async () => {
    const child = spawn(process.execPath, ["cli/bin.js", "start", "--smoke", "--json", "--port", "0", "--duration", "40"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    const last = out.trim().split("\n").at(-1) ?? "";
    expect(code, `exit ${code}; stderr:\n${err.slice(-3000)}`).toBe(0);
    const r = JSON.parse(last) as { ready_s: number; requests: number; served: number; lost: number; sites_used: number; envelope_binding_s: number };
    expect(r.ready_s).toBeGreaterThan(0);
    expect(r.lost).toBe(0);
    expect(r.served).toBeGreaterThan(0);
    expect(r.sites_used).toBeGreaterThanOrEqual(2);
    expect(r.envelope_binding_s).toBeGreaterThan(0);
    // The periodic log line says where requests ran and where power binds.
    expect(err).toMatch(/requests: \d+ served \(wind-bpat \d+%, wind-erco \d+%, grid-ciso \d+%\).*power binds/);
  }, 300_000);
});
