/**
 * Where a request entered Cloudflare's network, most specific first: the colo (e.g. "AMS"), then
 * the continent (e.g. "EU"). These are the keys of a site's `rttMs` in the fleet. Country codes
 * are left out: some collide with continent codes ("NA", "SA", "AS").
 */
export function edgeRegions(request: Request): string[] {
  const cf = request.cf as { colo?: unknown; continent?: unknown } | undefined;
  return [cf?.colo, cf?.continent].filter((x): x is string => typeof x === "string" && x.length > 0);
}
