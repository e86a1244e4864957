import { Slo } from "./request-class.ts";

/**
 * The request header in which the edge tells a site the SLO of the request's class, so the site
 * can judge each answered request against it (see `meetsSlo`) and count the outcome per class in
 * its heartbeat. Its value is `ttft=<ms>;tbt=<ms>` with an optional `;e2e=<ms>`.
 */
export const SLO_HEADER = "x-greenference-slo";

const KEYS = { ttft: "ttftMs", tbt: "tbtMs", e2e: "e2eMs" } as const;

/**
 * The header value of a class's SLO.
 *
 * @example
 * formatSloHeader({ ttftMs: 200, tbtMs: 50 }); // "ttft=200;tbt=50"
 */
export function formatSloHeader(slo: Slo): string {
  return `ttft=${slo.ttftMs};tbt=${slo.tbtMs}${slo.e2eMs === undefined ? "" : `;e2e=${slo.e2eMs}`}`;
}

/**
 * The SLO in a header value, or undefined when the header is absent or malformed (an unknown key,
 * a repeated one, a value that is not a positive number, or ttft or tbt missing).
 *
 * @example
 * parseSloHeader("ttft=200;tbt=50;e2e=60000"); // { ttftMs: 200, tbtMs: 50, e2eMs: 60000 }
 */
export function parseSloHeader(value: string | string[] | undefined | null): Slo | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (typeof text !== "string" || text.length > 128) return undefined;
  const slo: Record<string, number> = {};
  for (const part of text.split(";")) {
    const [key, raw, extra] = part.trim().split("=");
    const field = KEYS[key as keyof typeof KEYS];
    if (!field || raw === undefined || extra !== undefined || field in slo || !/^\d+(\.\d+)?$/.test(raw.trim())) return undefined;
    slo[field] = Number(raw);
  }
  const parsed = Slo.safeParse(slo);
  return parsed.success ? parsed.data : undefined;
}
