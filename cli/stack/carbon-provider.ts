import { createServer, type Server } from "node:http";
import type { GridValueSeries } from "../../src/core/data/grid-series.ts";
import { valueAt, type SeriesClock } from "./series-clock.ts";

/** Hours of forecast each answer carries (Electricity Maps gives 24 to 72). */
const FORECAST_HOURS = 24;

/**
 * A local stand-in for the Electricity Maps v3 API that the Worker's forecast refresh calls: it
 * replays each zone's hourly carbon series from the grid data on the stack's sped-up clock, so
 * "an hour ahead" is an hour of series time. `failing` makes every call answer 500 and `hanging`
 * leaves every call unanswered, for the fault tests. The real adapter code runs against it unchanged (only ELECTRICITYMAPS_API_URL differs).
 *
 * @example
 * const provider = await CarbonProvider.start({ zones: { CISO: series }, clock, token: "local" });
 * provider.url; // "http://127.0.0.1:PORT", the Worker's ELECTRICITYMAPS_API_URL
 */
export class CarbonProvider {
  failing = false;
  /** Takes every call and never answers (fault injection: a provider that hangs). */
  hanging = false;
  calls = 0;
  url = "";
  private readonly server: Server;

  private constructor(private readonly o: { zones: Record<string, GridValueSeries>; clock: SeriesClock; token: string }) {
    this.server = createServer((req, res) => {
      this.calls++;
      const url = new URL(req.url ?? "/", "http://provider");
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (this.hanging) return;
      if (this.failing) return send(500, { message: "local carbon provider: failing on purpose (fault injection)" });
      if (req.headers["auth-token"] !== o.token) return send(401, { message: "missing or wrong auth-token" });
      const zone = url.searchParams.get("zone") ?? "";
      const series = o.zones[zone];
      if (!series) return send(404, { message: `unknown zone ${zone}` });
      const now = Date.now();
      if (url.pathname === "/v3/carbon-intensity/latest") return send(200, { zone, ...this.point(series, now) });
      if (url.pathname === "/v3/carbon-intensity/forecast") {
        const hourMs = 3_600_000;
        const firstSeriesHour = Math.ceil(o.clock.seriesAt(now) / hourMs) * hourMs;
        const forecast = Array.from({ length: FORECAST_HOURS }, (_, h) => this.point(series, o.clock.wallAt(firstSeriesHour + h * hourMs)));
        return send(200, { zone, forecast });
      }
      send(404, { message: `no route ${url.pathname}` });
    });
  }

  static async start(o: { zones: Record<string, GridValueSeries>; clock: SeriesClock; token: string; port?: number }): Promise<CarbonProvider> {
    const provider = new CarbonProvider(o);
    await new Promise<void>((resolve) => provider.server.listen(o.port ?? 0, "127.0.0.1", resolve));
    const address = provider.server.address();
    provider.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    return provider;
  }

  /** The zone's intensity at a wall time, as the series says at the matching series time. */
  intensityAt(zone: string, wallMs: number): number | null {
    const series = this.o.zones[zone];
    return series ? valueAt(series.epochMs, series.values, this.o.clock.seriesAt(wallMs)) : null;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private point(series: GridValueSeries, wallMs: number) {
    return { carbonIntensity: Math.round(valueAt(series.epochMs, series.values, this.o.clock.seriesAt(wallMs)) * 10) / 10, datetime: new Date(Math.round(wallMs)).toISOString() };
  }
}
