import type { InstanceState } from "../../src/core/schemas/telemetry.ts";
import type { Engine } from "../engines/engine.ts";

const WORST_FIRST: InstanceState[] = ["failed", "starting", "draining", "stopped", "ready"];

/**
 * One state for an instance's replicas: the worst of theirs (failed, starting, draining, stopped,
 * ready, in that order), a ready replica that does not answer its health checks counting as failed
 * (the edge then routes around the instance, as it does around one whose engine ended). With no
 * replica running it is "starting" while a plan is being applied, else "failed" (its start failed
 * and the applier gave up or waits to retry).
 */
export function groupState(replicas: readonly Engine[], applying: boolean): InstanceState {
  if (replicas.length === 0) return applying ? "starting" : "failed";
  const states = new Set(replicas.map(reportedState));
  return WORST_FIRST.find((s) => states.has(s)) ?? "ready";
}

/** A replica's state as its instance reports it: one that runs but does not answer is failed. */
const reportedState = (e: Engine): InstanceState => (e.state === "ready" && e.unresponsive ? "failed" : e.state);
