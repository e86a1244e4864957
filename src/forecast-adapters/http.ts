import { ForecastSourceError } from "../core/forecast/forecast-source-error.ts";

/** `fetch` as the adapters use it; tests pass a fake or point the base URL at a local server. */
export type FetchFn = (url: string, init?: RequestInit) => Promise<Response>;

/** How an adapter reaches its provider. */
export interface HttpOptions {
  fetch: FetchFn;
  /** Whole-request limit (head and body). */
  timeoutMs: number;
}

/** Requests to providers give up after this long by default. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * GETs `url` and returns the body text; any failure (non-2xx, timeout, network) is a
 * ForecastSourceError naming `source` and the path, never the query string (it may hold keys).
 *
 * @example
 * const text = await getText("electricitymaps", "https://api.electricitymap.org/v3/...", { "auth-token": t }, http);
 */
export async function getText(source: string, url: string, headers: Record<string, string>, http: HttpOptions): Promise<string> {
  const path = safePath(url);
  const abort = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(new ForecastSourceError(source, "timeout", `no answer from ${path} within ${http.timeoutMs} ms`));
    }, http.timeoutMs);
  });
  try {
    return await Promise.race([request(source, url, path, headers, http.fetch, abort.signal), timeout]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/** GETs `url` and parses the body as JSON (a body that is not JSON is a schema failure). */
export async function getJson(source: string, url: string, headers: Record<string, string>, http: HttpOptions): Promise<unknown> {
  const text = await getText(source, url, headers, http);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ForecastSourceError(source, "schema", `${safePath(url)} did not answer JSON`);
  }
}

/** `base` + `path` with the base's trailing slashes dropped. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}${path}`;
}

async function request(source: string, url: string, path: string, headers: Record<string, string>, fetchFn: FetchFn, signal: AbortSignal): Promise<string> {
  let response: Response;
  try {
    response = await fetchFn(url, { method: "GET", headers: { accept: "application/json", ...headers }, signal });
  } catch (error) {
    if (error instanceof ForecastSourceError) throw error;
    throw new ForecastSourceError(source, "network", `${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!response.ok) {
    const detail = (await response.text().catch(() => "")).slice(0, 200).replace(/\s+/g, " ").trim();
    throw new ForecastSourceError(source, "http", `HTTP ${response.status} from ${path}${detail ? `: ${detail}` : ""}`);
  }
  return response.text();
}

function safePath(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url.split("?")[0] ?? url;
  }
}
