#!/usr/bin/env node
// Entry of the `greenference` CLI: registers tsx so the TypeScript sources run as they are.
import { register } from "tsx/esm/api";

register();
const { main } = await import("./main.ts");
process.exitCode = await main(process.argv.slice(2));
