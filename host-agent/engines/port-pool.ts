import { freePort } from "../util/free-port.ts";

/**
 * Ports for engine processes: `base`, `base + 1`, ... handed out lowest first and returned when an
 * engine stops. With `base` 0 each port is one the OS reports free at that moment (for tests).
 */
export class PortPool {
  private readonly used = new Set<number>();

  constructor(
    private readonly base: number,
    private readonly host = "127.0.0.1",
  ) {}

  async take(): Promise<number> {
    if (this.base === 0) {
      for (;;) {
        const port = await freePort(this.host);
        if (!this.used.has(port)) return this.mark(port);
      }
    }
    let port = this.base;
    while (this.used.has(port)) port++;
    if (port > 65535) throw new Error(`no engine port left above ${this.base}`);
    return this.mark(port);
  }

  release(port: number): void {
    this.used.delete(port);
  }

  private mark(port: number): number {
    this.used.add(port);
    return port;
  }
}
