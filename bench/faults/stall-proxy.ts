import { createServer, request, type Server } from "node:http";

/**
 * An HTTP proxy in front of a site's ingress that, while `stalling`, passes each answer's head
 * on and then holds its body: a site that stalls after the response head, as a hung engine or a
 * network that stops delivering looks to the edge.
 */
export class StallProxy {
  stalling = false;
  url = "";
  /** Requests it has passed on. */
  forwarded = 0;
  private readonly server: Server;

  private constructor(target: string) {
    this.server = createServer((req, res) => {
      this.forwarded++;
      const upstream = request(new URL(req.url ?? "/", target), { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.flushHeaders();
        if (this.stalling) return void answer.resume(); // read and drop: the client gets nothing after the head
        answer.pipe(res);
      });
      upstream.on("error", () => res.destroy());
      req.pipe(upstream);
    });
  }

  static async start(target: string): Promise<StallProxy> {
    const proxy = new StallProxy(target);
    await new Promise<void>((resolve) => proxy.server.listen(0, "127.0.0.1", resolve));
    const address = proxy.server.address();
    proxy.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    return proxy;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
