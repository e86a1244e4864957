import type { EngineConfig, EngineInstance } from "../../engine/engine-instance.ts";
import type { ClassId } from "../../schemas/ids.ts";

/**
 * One engine replica of a plan entry at a site: an iteration-level engine instance, when it is up
 * (`readyAtS`), when it stops taking requests (`stopAtS`: the plan dropped it, or the handover
 * that kept it running is over), and the requests the gateway has in flight on it.
 */
export class Replica {
  inFlight = 0;
  stopAtS = Infinity;
  /** When its last request finished after it stopped and its GPUs went back to the site. */
  retiredAtS: number | undefined;
  /** The time of the engine's event in the simulator's queue (Infinity: none queued). */
  scheduledS = Infinity;
  /** Engine energy already counted in the site's draw (J), and the engine time it covers. */
  private countedJ = 0;
  private countedUntilS: number;

  constructor(
    readonly id: number,
    readonly siteId: string,
    /** `site/instance` of the plan entry it belongs to. */
    public entryKey: string,
    readonly model: string,
    readonly tp: number,
    public mhz: number,
    readonly readyAtS: number,
    readonly kvCapacityTokens: number,
    readonly engine: EngineInstance,
    /** The classes its entry is routed: what it stands in for after a plan drops it. */
    public classes: readonly ClassId[],
  ) {
    this.countedUntilS = engine.nowS;
  }

  /**
   * The engine's energy since the last call, up to `tS` (J). An engine that is idle is idled to
   * `tS`; one in the middle of an iteration that ends after `tS` has counted that iteration whole,
   * so only the share of it up to `tS` is taken (power taken as even over the iteration) and the
   * rest is left for later calls.
   */
  energyUpTo(tS: number): number {
    const e = this.engine;
    if (e.nowS < tS && e.nextEventS() >= tS) e.idleUntil(tS);
    const newJ = e.energyJ - this.countedJ;
    const span = e.nowS - this.countedUntilS;
    const take = e.nowS > tS && span > 0 ? (newJ * Math.max(0, tS - this.countedUntilS)) / span : newJ;
    this.countedJ += take;
    this.countedUntilS = Math.min(tS, e.nowS);
    return take;
  }

  /** True when the gateway may send it a request at `tS`. */
  accepting(tS: number): boolean {
    return this.readyAtS <= tS && tS < this.stopAtS;
  }

  /**
   * A new clock from the engine's next iteration (the switch stalls the engine as a real one
   * does): `mhz` is what it is booked at, `clock` what the engine runs (that clock locked, or a
   * per-iteration policy).
   */
  setClock(mhz: number, clock: EngineConfig["clock"] = mhz): void {
    this.mhz = mhz;
    this.engine.setClock(clock);
  }
}
