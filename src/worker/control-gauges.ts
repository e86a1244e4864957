import type { ControlGauges } from "../../durable-objects/control-do.ts";
import { series } from "./metrics.ts";

type Sample = [labels: Record<string, string>, value: number];

/**
 * The control plane's state as Prometheus gauges, beside the edge's counters at `GET /metrics`, so
 * an operator can alert on a planner that has stopped planning (`time() >
 * greenference_plan_valid_until_timestamp_seconds`), a cron handler that keeps failing, or a site
 * out of routing. Timestamps are seconds since the epoch; a series with nothing to show is left out.
 *
 * @example
 * controlGaugesText({ plan: null, sites: [{ site: "a", healthy: true, lastSeenMs: 1_000 }], cron: [] });
 * // '# HELP greenference_site_healthy ...\ngreenference_site_healthy{site="a"} 1\n...'
 */
export function controlGaugesText(g: ControlGauges): string {
  const s = (ms: number) => ms / 1000;
  const plan: Sample[] = g.plan ? [[{ policy: g.plan.policy }, g.plan.version]] : [];
  const families: [name: string, help: string, samples: Sample[]][] = [
    ["greenference_plan_version", "Version of the plan in force, by the policy that made it.", plan],
    ["greenference_plan_created_timestamp_seconds", "When the plan in force was made.", g.plan ? [[{}, s(g.plan.createdAtMs)]] : []],
    ["greenference_plan_valid_until_timestamp_seconds", "End of the validity of the plan in force; past it, no newer plan has been made and routing and the sites keep this one.", g.plan ? [[{}, s(g.plan.validUntilMs)]] : []],
    ["greenference_site_healthy", "1 while the fleet site's heartbeats keep it in routing, else 0.", g.sites.map((x) => [{ site: x.site }, x.healthy ? 1 : 0])],
    ["greenference_site_last_heartbeat_timestamp_seconds", "When the site's last heartbeat came.", g.sites.flatMap((x): Sample[] => (x.lastSeenMs === null ? [] : [[{ site: x.site }, s(x.lastSeenMs)]]))],
    ["greenference_cron_last_run_timestamp_seconds", "When the scheduled handler last ran (also on demand: replan, policy or fleet change).", g.cron.map((c) => [{ handler: c.handler }, s(c.lastRunMs)])],
    ["greenference_cron_last_success_timestamp_seconds", "When the scheduled handler last ran with status ok (absent when it never has).", g.cron.flatMap((c): Sample[] => (c.lastOkMs === null ? [] : [[{ handler: c.handler }, s(c.lastOkMs)]]))],
  ];
  return families.map(([name, help, samples]) => [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, ...samples.map(([labels, value]) => `${series(name, labels)} ${value}`)].join("\n") + "\n").join("");
}
