import type { Command } from "../lib/command.ts";

/** Where bench/ registers the commands it brings (`bench`, `reproduce`, `plan --bench`). */
const BENCH_COMMANDS = new URL("../bench/commands/index.ts", import.meta.url).href;

/**
 * One of bench/'s commands, loaded by path: the CLI depends on bench/ only at run time and only for
 * these commands, and a package without bench/'s commands says what it lacks (see main.ts).
 */
export async function benchCommand(name: string): Promise<Command> {
  const entry = (await import(BENCH_COMMANDS)) as { benchCommands?: Record<string, () => Promise<Command>> };
  const load = entry.benchCommands?.[name];
  if (!load) throw new Error(`bench/commands/index.ts registers no command '${name}'`);
  return load();
}
