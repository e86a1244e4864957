import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Commands the package ships; `start` and `bench` need the repository's dev dependencies. */
const SHIPPED = ["agent", "calibrate", "classes", "demo", "plan", "profile", "reproduce", "sim"];

/** The environment without what `npm test` sets for its own run (npm_config_*, npm_lifecycle_*). */
const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith("npm_")));

interface Packed {
  filename: string;
  size: number;
  entryCount: number;
  files: { path: string }[];
}

let dir: string;
let app: string;
let packed: Packed;

/**
 * Runs `npx greenference ...` in the installed folder (`via: "bin"` calls the installed bin link
 * with node, skipping npx's own start-up); never throws, returns what happened.
 */
async function greenference(args: string[], via: "npx" | "bin" = "npx") {
  const [file, prefix] = via === "npx" ? ["npx", ["--no", "greenference"]] : [process.execPath, [join(app, "node_modules", ".bin", "greenference")]];
  try {
    const r = await run(file, [...prefix, ...args], { cwd: app, env: cleanEnv(), maxBuffer: 16 << 20 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

// Packs the repository and installs the tarball into an empty folder as a user would. The
// package's dependencies come from the npm registry with the cache preferred (`npm ci` filled it
// with the same pinned versions); install scripts are off, as npm 12 does for unreviewed ones.
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "greenference-pack-"));
  app = join(dir, "app");
  const pack = await run("npm", ["pack", "--json", "--pack-destination", dir], { cwd: ROOT, env: cleanEnv(), maxBuffer: 16 << 20 });
  packed = (JSON.parse(pack.stdout) as Packed[])[0]!;
  await mkdir(app);
  await writeFile(join(app, "package.json"), JSON.stringify({ name: "pack-check", private: true }));
  await run("npm", ["install", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund", join(dir, packed.filename)], { cwd: app, env: cleanEnv() });
}, 240_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("npm pack", () => {
  it("ships the runtime and its data, not tests, fixtures or outputs", async () => {
    const paths = packed.files.map((f) => f.path);
    expect(paths.filter((p) => /\.test\.ts$|test-helper|test-fixtures|fixtures\/|^test\/|^out\/|RESULTS\.md$/.test(p))).toEqual([]);
    const data = await readdir(join(ROOT, "data"), { recursive: true, withFileTypes: true });
    const dataFiles = data.filter((d) => d.isFile()).map((d) => join(d.parentPath, d.name).slice(ROOT.length));
    expect(dataFiles.length).toBeGreaterThan(10);
    expect(paths).toEqual(expect.arrayContaining(["cli/bin.js", "host-agent/sim-engine/main.ts", "docs/scenarios/example.json", ...dataFiles]));
  });

  it("installs into an empty folder and runs the agent's help there", async () => {
    const r = await greenference(["agent", "--help"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("usage: greenference agent");
  });

  it("loads every shipped command with the package's dependencies only", async () => {
    const results = await Promise.all(SHIPPED.map(async (name) => ({ name, ...(await greenference([name, "--help"], "bin")) })));
    expect(results.filter((r) => r.code !== 0).map((r) => `${r.name}: ${r.stderr}`)).toEqual([]);
  }, 180_000);

  it("runs a simulation on the data the package carries", async () => {
    const data = join(app, "node_modules", "greenference", "data");
    const grid = join(data, "grid-2022", "BPAT-2022H1.csv");
    const scenario = {
      name: "package check",
      seed: 1,
      durationS: 300,
      model: "llama3.1-8b",
      sites: [{ id: "wind-bpat", gpu: "h100", gpus: 8, power: { kind: "wind", file: grid, startHour: 2400, peakMW: 0.05, rightSizePercentile: 20 }, carbon: { kind: "grid", file: grid, startHour: 2400 } }],
      workload: { kind: "trace", file: join(data, "azure-llm-2023", "AzureLLMInferenceTrace_conv.csv"), multiplier: 0.2 },
      profile: { tps: [8], loadFractions: [0.2, 0.5], requestsPerPoint: 20 },
      policy: { kind: "capacity", cadenceS: 300, tp: 8, mhz: "max", headroom: 1.2 },
    };
    await writeFile(join(app, "scenario.json"), JSON.stringify(scenario));
    const r = await greenference(["sim", "--scenario", "scenario.json", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { simulated: boolean; arrived: number; served: number };
    expect(result.simulated).toBe(true);
    expect(result.arrived).toBeGreaterThan(0);
    expect(result.served).toBeGreaterThan(0);
  }, 180_000);

  it("says that a command left out of the package runs from a clone", async () => {
    const r = await greenference(["start"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe("greenference start: this installation lacks cli/commands/start.ts, which the command needs; run it from a clone of the repository after `npm ci`");
  });
});
