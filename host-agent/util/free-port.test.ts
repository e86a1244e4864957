import { createServer, type Server } from "node:net";
import { describe, expect, it } from "vitest";
import { freePort, rangeBelowEphemeral } from "./free-port.ts";

const listenOn = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once("error", reject).listen(port, "127.0.0.1", () => resolve(server));
  });
const close = (server: Server) => new Promise((resolve) => server.close(resolve));
const portOf = (server: Server) => (server.address() as { port: number }).port;

describe("freePort", () => {
  it("gives a port a server can then bind, below the ephemeral range where the OS has one", async () => {
    const port = await freePort();
    await close(await listenOn(port));
    const range = rangeBelowEphemeral();
    if (range) expect(port >= range[0] && port < range[1]).toBe(true);
  });

  it("draws from the range it is given, and leaves a port that is in use to the OS", async () => {
    const probe = await listenOn(0);
    const port = portOf(probe);
    await close(probe);
    expect(await freePort("127.0.0.1", [port, port + 1])).toBe(port);

    const held = await listenOn(port);
    const other = await freePort("127.0.0.1", [port, port + 1]);
    expect(other).not.toBe(port);
    await close(await listenOn(other));
    await close(held);
  });
});
