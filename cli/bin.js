#!/usr/bin/env node
// Entry of the `greenference` CLI: registers tsx so the TypeScript sources run as they are.
import { register } from "tsx/esm/api";

// A closed pipe (`greenference ... | head`) ends output quietly, as other CLI tools do.
process.stdout.on("error", (error) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

register();
const { main } = await import("./main.ts");
process.exitCode = await main(process.argv.slice(2));
