import type { DeferralCommit } from "../schemas/deferral.ts";
import { firstSlotFrom } from "./cohorts.ts";
import type { DeferralRun, DeferralWorld } from "./deferral-world.ts";
import { tallyRun } from "./deferral-world.ts";
import { SlotRoom } from "./slot-room.ts";

/**
 * The baseline without temporal shifting: every request runs in the slot it is submitted in, at
 * the cleanest site with spare capacity then, as the edge places an interactive request (spatial
 * shifting only). Requests that find no room anywhere wait, first come first served, for the next
 * slot with room.
 *
 * @example
 * runAtSubmission(world).carbonG;
 */
export function runAtSubmission(world: DeferralWorld): DeferralRun {
  const queue = [...world.work].sort((a, b) => a.submittedAtMs - b.submittedAtMs || (a.id < b.id ? -1 : 1)).map((w) => ({ w, left: w.requests }));
  const commits: DeferralCommit[][] = [];
  for (let k = 0; k < world.slots; k++) {
    const room = new SlotRoom(world.actual(k), 0, world.slotMs / 1000);
    const order = room.cleanestFirst();
    const slot: DeferralCommit[] = [];
    for (const item of queue) {
      if (item.left === 0) continue;
      if (firstSlotFrom(world.startMs, world.slotMs, item.w.submittedAtMs) > k) break;
      for (const s of order) {
        const cost = room.sites[s]!.costs[item.w.classId];
        const n = room.fits(s, cost, item.left);
        if (n === 0) continue;
        room.take(s, cost!, n);
        item.left -= n;
        slot.push({ workId: item.w.id, site: room.sites[s]!.site, requests: n });
      }
    }
    commits.push(slot);
  }
  return tallyRun(world, commits);
}
