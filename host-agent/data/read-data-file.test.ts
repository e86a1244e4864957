import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { DataError } from "../../src/core/data/data-error.ts";
import { dataFilesIn, loadAzureTrace, loadFreesh, loadGrid, readDataFile } from "./read-data-file.ts";

const DATA = resolve(process.cwd(), "data");

describe("readDataFile", () => {
  it("turns a missing file or a directory into a DataError naming the path", async () => {
    await expect(readDataFile("no/such/trace.csv")).rejects.toThrow(new DataError("cannot read no/such/trace.csv: no such file"));
    await expect(readDataFile(DATA)).rejects.toThrow(`cannot read ${DATA}: is a directory`);
  });
});

describe("dataFilesIn", () => {
  it("lists a folder's files of one kind, sorted, and names a missing folder", async () => {
    expect(await dataFilesIn(join(DATA, "grid-2022"), ".csv")).toEqual(["AZPS", "BPAT", "CISO", "ERCO", "MISO"].map((ba) => join(DATA, "grid-2022", `${ba}-2022H1.csv`)));
    await expect(dataFilesIn("no/such/folder", ".csv")).rejects.toThrow(new DataError("cannot read no/such/folder: no such file"));
  });
});

describe("loaders", () => {
  it("load the real trace, a grid file and the FREESH folder", async () => {
    expect((await loadAzureTrace(join(DATA, "azure-llm-2023/AzureLLMInferenceTrace_conv.csv"))).requests).toHaveLength(19_366);
    expect((await loadGrid(join(DATA, "grid-2022/ERCO-2022H1.csv"))).rows).toHaveLength(4344);
    const freesh = await loadFreesh(join(DATA, "freesh"));
    expect(freesh.demand.a.rows).toHaveLength(288);
    expect(freesh.demand.b.rows[0]).toEqual({ ss: 0.8, sl: 0.2, ls: 23.8, ll: 7.2 });
    expect(freesh.emissions.bySite).toHaveLength(3);
  });

  it("report a bad row with the path they were given", async () => {
    const dir = mkdtempSync(join(tmpdir(), "greenference-data-"));
    const path = join(dir, "bad.csv");
    try {
      writeFileSync(path, "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00.1,12,7\n2023-11-16 18:00:01.1,12,7.5\n");
      await expect(loadAzureTrace(path)).rejects.toThrow(`${path} line 3: field GeneratedTokens: expected a non-negative integer, got "7.5"`);
      await expect(loadFreesh(dir)).rejects.toThrow(`cannot read ${join(dir, "profiles.json")}: no such file`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
