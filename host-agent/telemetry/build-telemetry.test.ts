import { describe, expect, it } from "vitest";
import { buildTelemetry, emergencyStandings } from "./build-telemetry.ts";

describe("buildTelemetry", () => {
  it("reports where DynamoLLM's emergency ladder stands, with what the gateway holds for each instance; nothing where no instance manager runs", () => {
    const controllers = [
      { instance: "ss", emergency: "max-clock" as const },
      { instance: "ll", emergency: "none" as const },
      { instance: "eco" }, // EcoFreq: no ladder
    ];
    const emergencies = emergencyStandings(controllers, (id) => (id === "ss" ? 12 : 0));
    expect(emergencies).toEqual([{ instance: "ss", step: "max-clock", held: 12 }]);
    const beat = (extra: object) => buildTelemetry({ site: "wind-a", sentAtMs: 1_000, appliedPlanVersion: 1, gpus: [], instances: [], pendingReconfigurations: 0, ...extra });
    expect(beat({ emergencies }).emergencies).toEqual([{ instance: "ss", step: "max-clock", held: 12 }]);
    // Instance managers, none in an emergency: an empty list, which says the ladder runs and stands nowhere.
    expect(beat({ emergencies: emergencyStandings([controllers[1]!], () => 0) }).emergencies).toEqual([]);
    expect(emergencyStandings([controllers[2]!], () => 0)).toBeUndefined();
    expect(beat({})).not.toHaveProperty("emergencies");
  });
});
