import type { SiteClient } from "../site-client.ts";

const KEY = Symbol.for("greenference.batchSiteClient");
type Holder = { [KEY]?: SiteClient };

/**
 * How a BatchDO reaches sites: `fetch`, unless a test replaced it (`useBatchSiteClient`) with the
 * fake sites its edge uses. Kept on globalThis so the test and the Durable Object share it however
 * the module graph is loaded.
 */
export const batchSiteClient: SiteClient = (url, init) => ((globalThis as Holder)[KEY] ?? ((u, i) => fetch(u, i)))(url, init);

/** Tests: the site client BatchDOs use (null restores fetch). */
export function useBatchSiteClient(client: SiteClient | null): void {
  if (client) (globalThis as Holder)[KEY] = client;
  else delete (globalThis as Holder)[KEY];
}
