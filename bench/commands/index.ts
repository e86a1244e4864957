import type { Command } from "../../lib/command.ts";

/**
 * The commands bench/ brings to the `greenference` CLI, by name, each loaded when it runs. The
 * CLI finds this file by its path (cli/bench-commands.ts), so cli/ imports nothing from bench/ and
 * bench/ nothing from cli/; both build on lib/.
 */
export const benchCommands: Record<string, () => Promise<Command>> = {
  bench: async () => (await import("./bench.ts")).bench,
  plan: async () => (await import("./plan-bench.ts")).planBench,
  reproduce: async () => (await import("./reproduce.ts")).reproduce,
};
