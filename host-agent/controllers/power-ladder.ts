import type { SitePlan } from "../../src/core/schemas/plan.ts";
import { clockBounds } from "../../src/core/model/clock-grid.ts";
import type { ClockLock } from "../gpu-state/tracked-gpu-backend.ts";
import type { ClockActuator } from "./clock-actuator.ts";

/** The rungs of the site's power ladder, lowest first. */
export const POWER_LADDER_STEPS = ["none", "min-clock", "power-limit"] as const;
export type PowerLadderStep = (typeof POWER_LADDER_STEPS)[number];

export interface PowerLadderSettings {
  /** A rung is released only once site power is at most this fraction of the cap... */
  releaseFraction: number;
  /** ...at this many checks in a row (so the ladder does not flap at the cap). */
  holdChecks: number;
}

export const POWER_LADDER_DEFAULTS: PowerLadderSettings = { releaseFraction: 0.95, holdChecks: 3 };

/** Where the ladder stands: its rung and the checks in a row spent below the release level. */
export interface PowerLadderState {
  level: number;
  calmChecks: number;
}

/**
 * One check of the power ladder, in the manner of DynamoLLM's emergency ladder
 * (src/core/planning/dynamollm/emergency-ladder.ts): over the cap, climb one rung, so a rung above
 * the first is reached only when the previous check already stood on the rung below and power is
 * still over; at or below `releaseFraction` of the cap for `holdChecks` checks, step down one rung;
 * in between, hold.
 *
 * @example
 * nextPowerLadderState({ level: 0, calmChecks: 0 }, 21_000, 20_000, POWER_LADDER_DEFAULTS); // { level: 1, calmChecks: 0 }
 */
export function nextPowerLadderState(s: PowerLadderState, sitePowerW: number, capW: number, o: PowerLadderSettings): PowerLadderState {
  if (sitePowerW > capW) return { level: Math.min(POWER_LADDER_STEPS.length - 1, s.level + 1), calmChecks: 0 };
  if (s.level === 0 || sitePowerW > capW * o.releaseFraction) return { level: s.level, calmChecks: 0 };
  const calm = s.calmChecks + 1;
  return calm >= o.holdChecks ? { level: s.level - 1, calmChecks: 0 } : { level: s.level, calmChecks: calm };
}

export interface PowerLadderOptions {
  actuator: ClockActuator;
  gpuCount: number;
  /** Site power = GPU power x this (the agent's server overhead). */
  serverOverhead: number;
  settings?: Partial<PowerLadderSettings>;
  log?: (message: string) => void;
}

/**
 * The site's power ladder: each check reads every GPU's power, compares GPU power x server overhead
 * with the plan's `powerCapW` and moves at most one rung:
 * 1. "min-clock": every instance under a clock policy is locked at its plan's lower bound, and
 *    controllers may choose nothing else (`allowed`) while the ladder stands here or above;
 * 2. "power-limit": every GPU's power limit is lowered to an equal share of cap / overhead, which
 *    also reaches instances with locked clocks (their plan leaves no lower clock); the limits are
 *    restored when the ladder steps back down.
 * Back at "none", policy instances return to their plan's range lock and their controllers resume.
 * Clocks are only touched while `clocksAllowed` (the plan is applied and not changing).
 *
 * @example
 * const ladder = new PowerLadder({ actuator, gpuCount: 8, serverOverhead: 1.82 });
 * await ladder.check(slice.site, true); // ladder.step: "min-clock" when the site draws over its cap
 */
export class PowerLadder {
  state: PowerLadderState = { level: 0, calmChecks: 0 };
  sitePowerW = 0;
  capW: number | null = null;
  private readonly settings: PowerLadderSettings;
  private savedLimits: Map<number, number> | null = null;
  private readonly log: (message: string) => void;

  constructor(private readonly o: PowerLadderOptions) {
    this.settings = { ...POWER_LADDER_DEFAULTS, ...o.settings };
    this.log = o.log ?? (() => undefined);
  }

  get step(): PowerLadderStep {
    return POWER_LADDER_STEPS[this.state.level]!;
  }

  /** The clock bounds a controller may use now: the plan's, or only the lower bound from "min-clock" up. */
  allowed(bounds: ClockLock): ClockLock {
    return this.state.level >= 1 ? { minMhz: bounds.minMhz, maxMhz: bounds.minMhz } : bounds;
  }

  /** One check against `site`'s cap (no plan: the ladder steps off at once). */
  async check(site: SitePlan | null, clocksAllowed: boolean): Promise<void> {
    const { actuator, gpuCount, serverOverhead } = this.o;
    const powers = await Promise.all(Array.from({ length: gpuCount }, (_, i) => actuator.gpus.powerUsageW(i)));
    this.sitePowerW = powers.reduce((s, w) => s + w, 0) * serverOverhead;
    this.capW = site?.powerCapW ?? null;
    const before = this.state.level;
    this.state = site ? nextPowerLadderState(this.state, this.sitePowerW, site.powerCapW, this.settings) : { level: 0, calmChecks: 0 };
    if (this.state.level !== before) this.log(`power ladder: ${POWER_LADDER_STEPS[before]} -> ${this.step} (site ${Math.round(this.sitePowerW)} W, cap ${this.capW ?? "none"} W)`);
    if (this.state.level >= 2 && !this.savedLimits && site) await this.limitPower(site.powerCapW);
    if (this.state.level < 2 && this.savedLimits) await this.restorePowerLimits();
    if (!site || !clocksAllowed) return;
    for (const inst of site.instances) {
      if (inst.clock.mode !== "policy") continue;
      const bounds = clockBounds(inst.clock);
      if (this.state.level >= 1) await actuator.lock(inst.gpus, bounds.minMhz, this.allowed(bounds));
      else if (before >= 1) await actuator.lockRange(inst.gpus, bounds);
    }
  }

  /** Restores the GPUs' power limits if the ladder lowered them (when the agent stops). */
  async restorePowerLimits(): Promise<void> {
    const saved = this.savedLimits;
    this.savedLimits = null;
    for (const [gpu, watts] of saved ?? []) {
      await this.o.actuator.gpus.setPowerLimitW(gpu, watts).catch((error: unknown) => this.log(`power ladder: could not restore GPU ${gpu}'s power limit to ${watts} W: ${(error as Error).message}`));
    }
  }

  private async limitPower(capW: number): Promise<void> {
    const { actuator, gpuCount, serverOverhead } = this.o;
    const share = Math.floor(capW / serverOverhead / gpuCount);
    this.savedLimits = new Map();
    for (let gpu = 0; gpu < gpuCount; gpu++) {
      try {
        const original = await actuator.gpus.powerLimitW(gpu);
        this.savedLimits.set(gpu, original);
        if (share > 0 && share < original) await actuator.gpus.setPowerLimitW(gpu, share);
      } catch (error) {
        this.log(`power ladder: could not limit GPU ${gpu} to ${share} W: ${(error as Error).message}`);
      }
    }
  }
}
