import { freePort } from "../util/free-port.ts";

/**
 * Ports for engine processes: `base`, `base + 1`, ... handed out lowest first and returned when an
 * engine stops. With `base` 0 each port is one the OS reports free at that moment (for tests).
 * A port `heldElsewhere` says is taken (an earlier run's engine listens there) is skipped.
 */
export class PortPool {
  private readonly used = new Set<number>();

  constructor(
    private readonly base: number,
    private readonly host = "127.0.0.1",
    private readonly heldElsewhere: (port: number) => boolean = () => false,
  ) {}

  async take(): Promise<number> {
    if (this.base === 0) {
      for (;;) {
        const port = await freePort(this.host);
        if (!this.taken(port)) return this.reserve(port);
      }
    }
    let port = this.base;
    while (this.taken(port)) port++;
    if (port > 65535) throw new Error(`no engine port left above ${this.base}`);
    return this.reserve(port);
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
