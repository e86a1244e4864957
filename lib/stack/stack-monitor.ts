import { envelopeBinding, type SitePowerUse } from "../../src/core/planning/envelope-binding.ts";
import type { Plan } from "../../src/core/schemas/plan.ts";
import type { LocalStack } from "./local-stack.ts";
import type { RequestOutcome } from "./request-outcome.ts";

/** What the monitor saw at its latest look at the plan in force. */
export interface PlanLook {
  version: number;
  sites: SitePowerUse[];
}

/**
 * Watches the running stack once a second: the plan in force against each site's envelope
 * (`envelopeBinding`), so it can say for how many seconds some site's plan was cut to its power
 * envelope, and how the load generator's requests spread over the sites, for the periodic log line.
 *
 * @example
 * const monitor = new StackMonitor(stack); monitor.start(); ...; monitor.stop(); monitor.envelopeBindingS;
 */
export class StackMonitor {
  /** Seconds (monitor ticks) in which some site's plan was cut to its envelope. */
  envelopeBindingS = 0;
  latest: PlanLook | null = null;
  private timer: NodeJS.Timeout | undefined;
  private reported = 0;

  constructor(private readonly stack: LocalStack) {}

  start(): void {
    this.timer = setInterval(() => void this.look().catch(() => undefined), 1000);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Reads the plan in force and counts this second as binding when some site's envelope binds. */
  async look(): Promise<PlanLook | null> {
    const { fleet, profile } = this.stack;
    if (!fleet || !profile) return null;
    const plan = await this.stack.admin<Plan>("GET", "/admin/v1/plan");
    this.latest = { version: plan.version, sites: envelopeBinding(plan, fleet, profile.rows) };
    if (this.latest.sites.some((s) => s.bound)) this.envelopeBindingS++;
    return this.latest;
  }

  /**
   * One line on what happened since the last call: the series time, each site's share of the
   * requests served, errors, and where the envelope binds now.
   */
  line(outcomes: readonly RequestOutcome[]): string {
    const recent = outcomes.slice(this.reported);
    this.reported = outcomes.length;
    const served = recent.filter((o) => o.ok);
    const bySite = new Map<string, number>(this.stack.sites.map((s) => [s.site.id, 0]));
    for (const o of served) if (o.site) bySite.set(o.site, (bySite.get(o.site) ?? 0) + 1);
    const shares = [...bySite].map(([site, n]) => `${site} ${served.length > 0 ? Math.round((100 * n) / served.length) : 0}%`).join(", ");
    const bound = this.latest?.sites.filter((s) => s.bound) ?? [];
    const power = bound.length > 0 ? `power binds at ${bound.map((s) => `${s.site} (cap ${(s.capW / 1000).toFixed(1)} kW)`).join(", ")}` : "power binds nowhere";
    const at = new Date(this.stack.clock.seriesAt(Date.now())).toISOString().slice(0, 16).replace("T", " ");
    return `[series ${at}] ${recent.length} requests: ${served.length} served (${shares}), ${recent.length - served.length} errors; plan v${this.latest?.version ?? "-"}, ${power}`;
  }
}
