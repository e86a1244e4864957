import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** Lowest port drawn from when the ephemeral range leaves room below it (clear of the well-known services). */
const LOWEST_PICKED_PORT = 20_000;
const TRIES_IN_RANGE = 20;

/**
 * A TCP port on `host` that was free a moment ago, for a process about to be started on it.
 *
 * It is drawn at random from below the OS's ephemeral port range where the OS says what that is
 * (Linux: `/proc/sys/net/ipv4/ip_local_port_range`). Ports from `listen(0)` come out of that range,
 * and so do the local ends of every outgoing connection, so a port picked there is taken, now and
 * then, by a connection opened before its owner binds it. Elsewhere, or when a few draws all find
 * their port in use, the OS picks (`listen(0)`). `range` ([first, last)) replaces the drawn-from range.
 */
export async function freePort(host = "127.0.0.1", range = rangeBelowEphemeral()): Promise<number> {
  if (range) {
    for (let i = 0; i < TRIES_IN_RANGE; i++) {
      const port = await bindAndRelease(host, randomInt(range[0], range[1]));
      if (port !== undefined) return port;
    }
  }
  const port = await bindAndRelease(host, 0);
  if (port === undefined) throw new Error(`no free TCP port on ${host}`);
  return port;
}

/** [20000, first ephemeral port), when the OS says where its ephemeral range starts and that leaves room. */
export function rangeBelowEphemeral(): [number, number] | undefined {
  let low: number;
  try {
    low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
  } catch {
    return undefined;
  }
  return Number.isInteger(low) && low - 1 > LOWEST_PICKED_PORT ? [LOWEST_PICKED_PORT, low] : undefined;
}

/** Whether `port` on `host` can be bound now (nothing listens there): bound and let go again at once. */
export async function portIsFree(host: string, port: number): Promise<boolean> {
  return (await bindAndRelease(host, port)) !== undefined;
}

/** Binds `port` (0: any) and lets it go again; the bound port, or undefined when it was in use. */
function bindAndRelease(host: string, port: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => (error.code === "EADDRINUSE" ? resolve(undefined) : reject(error)));
    server.listen(port, host, () => {
      const address = server.address();
      const bound = typeof address === "object" && address ? address.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}
