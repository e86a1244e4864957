import type { TraceRequest } from "../../src/core/data/azure-trace.ts";
import { forkRng, seededRng } from "../../src/core/ports/rng.ts";
import type { DeferrableWork } from "../../src/core/schemas/deferral.ts";
import type { ClassId } from "../../src/core/schemas/ids.ts";
import type { ClassScheme } from "../../src/core/schemas/request-class.ts";
import type { FleetWorkload } from "../../src/core/sim/fleet/fleet-types.ts";
import { classify, classIds, classShares } from "../../src/core/workload/class-scheme.ts";
import { empiricalLengthSampler } from "../../src/core/workload/length-sampler.ts";
import { rateAt, WEEK_S, WORKLOAD_SHAPES, weekRateTemplate, type RateTemplate } from "../../src/core/workload/week-template.ts";

/** The users' clock for the diurnal template: US Central (UTC-6), between the Pacific and Texas sites. */
export const USERS_UTC_OFFSET_H = -6;
/** Lines per batch job: log-uniform over this range. */
export const JOB_LINES = { min: 10, max: 2000 };
/** 1970-01-05 was a Monday: the week template's slot 0 starts on one. */
const FIRST_MONDAY_S = 4 * 86_400;

/** The interactive workload: DynamoLLM's conversation week shape at `meanRps`, the trace's class mix, on the users' clock from `startMs`. */
export function interactiveWorkload(startMs: number, meanRps: number, scheme: ClassScheme, trace: readonly TraceRequest[]): FleetWorkload & { template: RateTemplate; offsetS: number; totalRps(tS: number): number } {
  const template = weekRateTemplate({ ...WORKLOAD_SHAPES.conversation, label: "synthetic conversation week", meanRatePerS: meanRps });
  const offsetS = (((startMs / 1000 + USERS_UTC_OFFSET_H * 3600 - FIRST_MONDAY_S) % WEEK_S) + WEEK_S) % WEEK_S;
  const shares = classShares(scheme, trace);
  return {
    classes: classIds(scheme),
    template,
    offsetS,
    totalRps: (tS) => rateAt(template, tS + offsetS),
    rateRps: (tS, c) => rateAt(template, tS + offsetS) * (shares[c] ?? 0),
  };
}

/** Requests the workload sends over [0, untilS), by its 15-minute template slots. */
export function interactiveRequests(w: { totalRps(tS: number): number; template: RateTemplate }, untilS: number): number {
  let n = 0;
  for (let t = 0; t < untilS; t += w.template.slotS) n += w.totalRps(t) * Math.min(w.template.slotS, untilS - t);
  return n;
}

/**
 * Batch jobs submitted over [0, submitS) with `windowS` completion windows, `requests` lines in
 * all: job sizes log-uniform over JOB_LINES (the last job takes what is left), submission times
 * uniform, each line's lengths drawn from the trace; one backlog entry per (job, class).
 */
export function batchJobs(o: { startMs: number; submitS: number; windowS: number; requests: number; scheme: ClassScheme; trace: readonly TraceRequest[]; seed: number }): { work: DeferrableWork[]; jobs: number } {
  const rng = forkRng(seededRng(o.seed), 23);
  const lengths = empiricalLengthSampler(o.trace);
  const work: DeferrableWork[] = [];
  let left = o.requests;
  let jobs = 0;
  while (left > 0) {
    const lines = Math.min(left, Math.floor(Math.exp(Math.log(JOB_LINES.min) + rng.next() * Math.log(JOB_LINES.max / JOB_LINES.min))));
    const submittedAtMs = o.startMs + Math.floor(rng.next() * o.submitS * 1000);
    const byClass = new Map<ClassId, number>();
    for (let i = 0; i < lines; i++) {
      const l = lengths(rng);
      const c = classify(o.scheme, l.inputTokens, l.outputTokens);
      byClass.set(c, (byClass.get(c) ?? 0) + 1);
    }
    for (const [classId, requests] of [...byClass].sort()) work.push({ id: `job${jobs}:${classId}`, classId, requests, submittedAtMs, deadlineMs: submittedAtMs + o.windowS * 1000 });
    left -= lines;
    jobs++;
  }
  return { work, jobs };
}
