import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";

/** Whether anything still answers at a URL (a refused connection is what a stopped stack gives). */
async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  }
}

describe("npm start (greenference start) as a user runs it", () => {
  it("prints the dashboard URL and a curl example, serves the curl, and Ctrl-C stops every process it started", async () => {
    const child = spawn(process.execPath, ["cli/bin.js", "start", "--port", "0", "--load-rps", "1"], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env } });
    const out: string[] = [];
    const err: string[] = [];
    createInterface({ input: child.stderr }).on("line", (l) => err.push(l));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const dashboard = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no dashboard URL within 180 s; stderr:\n${err.slice(-30).join("\n")}`)), 180_000);
      createInterface({ input: child.stdout }).on("line", (line) => {
        out.push(line);
        const m = /dashboard:\s+(\S+)/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      void exited.then((code) => reject(new Error(`exited with ${code} before printing the dashboard URL; stderr:\n${err.slice(-30).join("\n")}`)));
    });
    const edge = new URL(dashboard).origin;
    await new Promise((r) => setTimeout(r, 500));
    expect(out.join("\n")).toContain(`curl -s ${edge}/v1/chat/completions`);

    // The printed curl, as a user would paste it.
    const curlBody = /-d '(.+)'/.exec(out.join("\n"))![1]!;
    const r = await fetch(`${edge}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: curlBody });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { choices: unknown[] }).choices).toHaveLength(1);
    expect((await fetch(dashboard)).status).toBe(200);
    const sites = /sites:\s+(.+)/.exec(out.join("\n"))![1]!.match(/http:\/\/127\.0\.0\.1:\d+/g)!;
    expect(sites).toHaveLength(3);

    child.kill("SIGINT");
    expect(await exited).toBe(0);
    const summary = JSON.parse(out.at(-1)!) as { stopped: boolean; reason: string; requests: number };
    expect(summary).toMatchObject({ stopped: true, reason: "SIGINT" });
    for (const url of [edge, ...sites]) expect(await answers(url), `${url} still answers after Ctrl-C`).toBe(false);
  }, 300_000);
});
