import type { Command } from "../command.ts";

/** Registry of CLI subcommands: one file each in this folder. */
export const commands: Record<string, Command> = {};
