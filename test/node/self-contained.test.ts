import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

// Spelled in parts so this file does not name what it looks for.
const OUTSIDE = ["..", "shared"].join("/");

describe("the repository is self-contained", () => {
  it("no tracked file names a path outside the repository", () => {
    const files = execFileSync("git", ["ls-files", "-z"], { encoding: "utf8" }).split("\0").filter(Boolean);
    expect(files.length).toBeGreaterThan(100);
    const naming = files.filter((f) => {
      const text = readFileSync(f);
      return !text.subarray(0, 8000).includes(0) && text.toString("utf8").includes(OUTSIDE);
    });
    expect(naming).toEqual([]);
  });

  it("the data sets the defaults read are in data/, with their licences", () => {
    const readme = readFileSync("data/README.md", "utf8");
    for (const file of ["azure-llm-2023/AzureLLMInferenceTrace_conv.csv", "grid-2022/BPAT-2022H1.csv", "freesh/profiles.json", "splitwise/perf_model.csv", "licences/azure-public-dataset-CC-BY-4.0.txt"]) {
      expect(readFileSync(`data/${file}`).length, file).toBeGreaterThan(0);
    }
    expect(readme).toContain("CC-BY 4.0");
    expect(readme).toContain("Splitwise");
  });
});
