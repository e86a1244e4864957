import { AgentStartError, type Hardware } from "../agent/hardware.ts";
import type { AgentConfig } from "../config/agent-config.ts";
import type { RequestLog } from "../telemetry/request-log.ts";
import type { RequestTracker } from "../telemetry/request-tracker.ts";
import { ControlProfiles, loadProfileTable } from "./control-profiles.ts";
import { LocalControllers, type ApplierView } from "./local-controllers.ts";

/**
 * The agent's local controllers as its configuration sets them up: simulated engines run EcoFreq
 * per iteration, periods are in the site's time (simulated time on a simulated site), and a bad
 * `controlProfile` file stops the agent at start with the reason.
 *
 * @example
 * const controllers = agentControllers(config, hardware, { requestLog, requests, applier: () => applier, nowMs: () => Date.now(), log });
 */
export function agentControllers(config: AgentConfig, hardware: Hardware, o: { requestLog: RequestLog; requests: RequestTracker; applier: () => ApplierView; nowMs: () => number; log: (message: string) => void }): LocalControllers {
  let profiles: ControlProfiles;
  try {
    profiles = new ControlProfiles(config.controlProfile ? loadProfileTable(config.controlProfile) : undefined);
  } catch (error) {
    throw new AgentStartError(`controlProfile: ${(error as Error).message}`);
  }
  return new LocalControllers({
    ...o,
    gpus: hardware.gpus,
    gpuTypes: hardware.gpuTypes,
    perIteration: config.engine === "sim",
    slo: { multiple: config.sloMultiple, ttftMs: config.sloTtftMs, tbtMs: config.sloTbtMs },
    profiles,
    serverOverhead: config.serverOverhead,
    speed: hardware.sim?.clock.speed ?? 1,
    ecofreqPeriodMs: config.ecofreqPeriodMs,
  });
}
