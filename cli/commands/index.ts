import type { Command } from "../command.ts";
import { agent } from "./agent.ts";
import { bench } from "./bench.ts";
import { calibrate } from "./calibrate.ts";
import { classes } from "./classes.ts";
import { demo } from "./demo.ts";
import { plan } from "./plan.ts";
import { profile } from "./profile.ts";
import { sim } from "./sim.ts";

/** Registry of CLI subcommands: one file each in this folder. */
export const commands: Record<string, Command> = {
  agent,
  bench,
  calibrate,
  classes,
  demo,
  plan,
  profile,
  sim,
};
