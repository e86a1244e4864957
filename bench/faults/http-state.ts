import type { LocalStack, StackSiteHandle } from "../../cli/stack/local-stack.ts";

/**
 * The edge state a refused request must not touch, read through the admin API: the fleet, the
 * plan's version and history, the API keys, and which sites hold an ingress secret. (Over HTTP,
 * live heartbeats and Planner-S move health, generation and routing weights on their own; the
 * workerd tests compare the Durable Objects' whole storage.)
 */
export function edgeSnapshot(stack: LocalStack): () => Promise<string> {
  return async () => {
    const [fleet, plan, history, keys, sites] = await Promise.all([
      stack.admin("GET", "/admin/v1/fleet"),
      stack.admin<{ version: number }>("GET", "/admin/v1/plan"),
      stack.admin<{ version: number }[]>("GET", "/admin/v1/plan/history"),
      stack.admin("GET", "/admin/v1/keys"),
      stack.admin<{ site: string; ingressSecret: unknown }[]>("GET", "/admin/v1/sites"),
    ]);
    return JSON.stringify({ fleet, plan: plan.version, history: history.map((h) => h.version), keys, ingress: sites.map((s) => [s.site, s.ingressSecret]) });
  };
}

/** A site's state a refused request must not touch, through its local API: the plan it holds and applied, and its engines. */
export function siteSnapshot(site: StackSiteHandle): () => Promise<string> {
  return async () => {
    const status = (await (await fetch(`${site.localApiUrl}/v1/status`, { headers: { authorization: `Bearer ${site.readToken}` } })).json()) as { applier: { appliedVersion: number | null; desiredVersion: number | null }; engines: { instance: string; replica: number }[] };
    return JSON.stringify({ applied: status.applier.appliedVersion, desired: status.applier.desiredVersion, engines: status.engines.map((e) => `${e.instance}/${e.replica}`).sort() });
  };
}
