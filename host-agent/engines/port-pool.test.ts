import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { freePort, portIsFree } from "../util/free-port.ts";
import { PortPool } from "./port-pool.ts";

const strangers: Server[] = [];

/** Another process's listener on `port` (the test's own server stands in for it). */
const listenOn = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once("error", reject).listen(port, "127.0.0.1", () => resolve(server));
    strangers.push(server);
  });

afterEach(async () => {
  await Promise.all(strangers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

describe("PortPool", () => {
  it("skips a port another process listens on, and hands out one an engine can bind", async () => {
    const base = await freePort();
    await listenOn(base);
    const pool = new PortPool(base);
    const port = await pool.take();
    expect(port).toBeGreaterThan(base);
    expect(await portIsFree("127.0.0.1", port)).toBe(true);
  });

  it("gives each of two takes beside each other its own port", async () => {
    const pool = new PortPool(await freePort());
    const [a, b] = await Promise.all([pool.take(), pool.take()]);
    expect(a).not.toBe(b);
  });

  it("gives up, naming the ports in use, after as many busy ports as it may look past", async () => {
    const base = await freePort();
    await listenOn(base);
    await expect(new PortPool(base, "127.0.0.1", () => false, 1).take()).rejects.toThrow(`no free engine port from ${base} (enginePortBase, --engine-port-base): other processes listen on 127.0.0.1 at 1 port(s) from ${base} to ${base}`);
  });
});
