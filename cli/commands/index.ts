import type { Command } from "../../lib/command.ts";
import { benchCommand } from "../bench-commands.ts";

/** A subcommand: what `greenference --help` says of it, and its module, loaded only when it runs. */
export interface CommandEntry {
  summary: string;
  load(): Promise<Command>;
}

/**
 * Registry of CLI subcommands, one file each in this folder (`bench` and `reproduce` are bench/'s,
 * see bench-commands.ts). Modules load on demand so that a command starts without the others'
 * dependencies (the host agent does not load the simulator).
 */
export const commands: Record<string, CommandEntry> = {
  agent: { summary: "run the host agent of a GPU site (plan applier, engines, telemetry, local API)", load: async () => (await import("./agent.ts")).agent },
  bench: { summary: "run a benchmark (sim, edge, edge-start, agent, e2e, batch, faults)", load: () => benchCommand("bench") },
  calibrate: { summary: "check the performance/power model against its calibration data", load: async () => (await import("./calibrate.ts")).calibrate },
  classes: { summary: "request classes (length percentiles and shares) of a trace", load: async () => (await import("./classes.ts")).classes },
  demo: { summary: "simulated per-class energy-optimal (TP, clock) vs max clock, in seconds", load: async () => (await import("./demo.ts")).demo },
  plan: { summary: "plan a fleet file with a registered policy (--fleet), or benchmark Planner-L (--bench)", load: async () => (await import("./plan.ts")).plan },
  profile: { summary: "produce a profile table (--virtual: from the calibrated model)", load: async () => (await import("./profile.ts")).profile },
  reproduce: { summary: "re-run the seed papers' experiments (simulated) and regenerate docs/RESULTS.md", load: () => benchCommand("reproduce") },
  sim: { summary: "run a fleet simulation scenario (simulated results, plots with --out)", load: async () => (await import("./sim.ts")).sim },
  start: { summary: "run the whole system locally: edge in wrangler dev, 3 simulated sites, load, dashboard (npm start)", load: async () => (await import("./start.ts")).start },
};
