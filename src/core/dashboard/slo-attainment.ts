import type { ClassId } from "../schemas/ids.ts";
import type { RequestClass } from "../schemas/request-class.ts";
import type { InstanceTelemetry } from "../schemas/telemetry.ts";

/** How `sloLoad` judges attainment; the dashboard shows it with the figures. */
export const SLO_ATTAINMENT_METHOD =
  "From the newest heartbeat of each site: per instance and class, the class's served req/s counts as meeting its SLO when the " +
  "instance's p99 TTFT and p99 TBT over the heartbeat window are within the class's SLO (a latency the instance did not report is " +
  "not judged; instances that reported neither are left out). Attainment = req/s meeting / req/s judged. Fleet-wide figures use healthy sites only.";

/** Served req/s that were judged against their class's SLO, and those that met it. */
export interface SloLoad {
  judgedRps: number;
  metRps: number;
}

/**
 * Per class, the served load of `instances` judged against the class SLO (see SLO_ATTAINMENT_METHOD).
 *
 * @example
 * attainment(total(sloLoad(telemetry.instances, fleet.classes))); // 0.75
 */
export function sloLoad(instances: readonly InstanceTelemetry[], classes: readonly RequestClass[]): Map<ClassId, SloLoad> {
  const out = new Map<ClassId, SloLoad>();
  const byId = new Map(classes.map((c) => [c.id as string, c]));
  for (const inst of instances) {
    if (!inst.ttftMs && !inst.tbtMs) continue;
    for (const [classId, rps] of Object.entries(inst.servedRps)) {
      const cls = byId.get(classId);
      if (!cls || !(rps > 0)) continue;
      const met = (!inst.ttftMs || inst.ttftMs.p99 <= cls.slo.ttftMs) && (!inst.tbtMs || inst.tbtMs.p99 <= cls.slo.tbtMs);
      const load = out.get(cls.id) ?? { judgedRps: 0, metRps: 0 };
      load.judgedRps += rps;
      if (met) load.metRps += rps;
      out.set(cls.id, load);
    }
  }
  return out;
}

/** The sum of several loads. */
export function total(loads: Iterable<SloLoad>): SloLoad {
  const sum = { judgedRps: 0, metRps: 0 };
  for (const l of loads) {
    sum.judgedRps += l.judgedRps;
    sum.metRps += l.metRps;
  }
  return sum;
}

/** met / judged, or null when nothing was judged. */
export function attainment(load: SloLoad | undefined): number | null {
  return load && load.judgedRps > 0 ? load.metRps / load.judgedRps : null;
}
