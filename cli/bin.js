#!/usr/bin/env node
// Entry of the `greenference` CLI: registers tsx so the TypeScript sources run as they are.
import { register } from "tsx/esm/api";

// A reader that went away (`greenference ... | head`, a log pipe that closed) loses the output, not
// the process: it runs to its end, and a long-running agent keeps serving and stops cleanly when told.
const readerGone = new Set(["EPIPE", "ERR_STREAM_DESTROYED"]);
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error) => {
    if (!readerGone.has(error.code)) throw error;
  });
}

register();
const { main } = await import("./main.ts");
process.exitCode = await main(process.argv.slice(2));
