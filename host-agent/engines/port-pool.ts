import { freePort, portIsFree } from "../util/free-port.ts";

/** Most ports one `take` finds in use by other processes before it gives up. */
export const MAX_BUSY_PORTS = 64;

/**
 * Ports for engine processes: `base`, `base + 1`, ... handed out lowest first and returned when an
 * engine stops. With `base` 0 each port is one the OS reports free at that moment (for tests).
 * A port `heldElsewhere` says is taken (an earlier run's engine listens there) is skipped, and so
 * is one another process listens on (bound briefly to find out): an engine started there would
 * fail to bind while the other process answered its health checks. After `maxBusy` such ports
 * `take` gives up.
 */
export class PortPool {
  private readonly used = new Set<number>();

  constructor(
    private readonly base: number,
    private readonly host = "127.0.0.1",
    private readonly heldElsewhere: (port: number) => boolean = () => false,
    private readonly maxBusy = MAX_BUSY_PORTS,
  ) {}

  async take(): Promise<number> {
    if (this.base === 0) {
      for (;;) {
        const port = await freePort(this.host);
        if (!this.taken(port)) return this.reserve(port);
      }
    }
    const busy: number[] = [];
    for (let port = this.base; port <= 65535; port++) {
      if (this.taken(port)) continue;
      // Reserved while it is probed, so a take running beside this one passes it by.
      this.reserve(port);
      if (await portIsFree(this.host, port)) return port;
      this.release(port);
      busy.push(port);
      if (busy.length >= this.maxBusy) throw new Error(`no free engine port from ${this.base} (enginePortBase, --engine-port-base): other processes listen on ${this.host} at ${busy.length} port(s) from ${busy[0]} to ${busy.at(-1)}`);
    }
    throw new Error(`no engine port left above ${this.base}`);
  }

  /** Marks `port` used (an adopted engine's). */
  reserve(port: number): number {
    this.used.add(port);
    return port;
  }

  release(port: number): void {
    this.used.delete(port);
  }

  private taken(port: number): boolean {
    return this.used.has(port) || this.heldElsewhere(port);
  }
}
