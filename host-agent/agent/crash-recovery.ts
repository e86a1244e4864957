import { join } from "node:path";
import type { AgentConfig } from "../config/agent-config.ts";
import { EngineFiles } from "../engines/engine-files.ts";
import { OrphanEngines } from "../engines/orphan-engines.ts";
import { GpuDefaults } from "../gpu-state/gpu-defaults.ts";
import { PlanStore } from "../state/plan-store.ts";
import { openStateDir, type StateDir } from "../state/state-dir.ts";
import type { Hardware } from "./hardware.ts";

/** What the agent holds so that it can recover from a crash, and undoes at a clean stop. */
export interface Recovery {
  state: StateDir;
  /** The GPUs' settings from before the agent's changes (`gpu-defaults.json`). */
  gpuDefaults: GpuDefaults;
  /** Engine pid files and output (`engines/`). */
  engineFiles: EngineFiles;
  /** Engines an earlier run left, until adopted or ended. */
  orphans: OrphanEngines;
  /** The last plan slice taken up (`plan.json`), applied at a start that cannot reach the edge. */
  plans: PlanStore;
}

/**
 * The agent's start-up after a possible crash, before it changes anything: takes the state dir,
 * puts every GPU back to the settings saved before an earlier run's first change (or saves them
 * now), finds the engines an earlier run left and the plan it kept. Those engines wait `engineAdoptWindowMs` for a launch
 * of the plan to adopt them and are ended after it; at once where the window is 0 or the engine
 * is simulated (simulated engines live in the agent and cannot adopt a process).
 *
 * @example
 * const recovery = await recover(config, hardware, { temporaryStateDir: false, log });
 */
export async function recover(config: AgentConfig, hardware: Hardware, o: { temporaryStateDir: boolean; log: (message: string) => void }): Promise<Recovery> {
  const state = openStateDir({ configured: config.stateDir, temporary: o.temporaryStateDir, site: config.site });
  try {
    const gpuDefaults = await GpuDefaults.restoreOrRecord(hardware.gpus, join(state.dir, "gpu-defaults.json"), o.log);
    const engineFiles = new EngineFiles(join(state.dir, "engines"));
    const orphans = await OrphanEngines.recover({ files: engineFiles, graceMs: config.stopGraceMs, log: o.log });
    if (config.engine === "sim" || config.engineAdoptWindowMs === 0) await orphans.endAll("this run does not adopt engines");
    else if (orphans.size > 0) orphans.endAllAfter(config.engineAdoptWindowMs);
    return { state, gpuDefaults, engineFiles, orphans, plans: new PlanStore(join(state.dir, "plan.json"), o.log) };
  } catch (error) {
    state.release();
    throw error;
  }
}
