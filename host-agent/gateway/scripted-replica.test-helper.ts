import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { InstanceState } from "../../src/core/schemas/telemetry.ts";
import type { DrainResult, Engine, EngineLaunch, EngineLoad } from "../engines/engine.ts";
import { closeServer, listen } from "../util/http.ts";

/** One request a scripted replica received: its parsed body, headers, and whether the client went away early. */
export interface SeenRequest {
  body: { max_tokens?: number; stream?: boolean; [k: string]: unknown };
  headers: IncomingMessage["headers"];
  closedEarly: boolean;
}

/**
 * An engine replica whose HTTP server runs `script` for each completion request, on 127.0.0.1:
 * for faults the simulated engine does not make (dropping the connection, dying mid-stream,
 * answering slowly). It serves the gateway the `Engine` face: state, url, accepting.
 */
export class ScriptedReplica implements Engine {
  readonly kind = "vllm";
  readonly recordsRequests = false;
  state: InstanceState = "stopped";
  url: string | undefined;
  accepting = false;
  readonly seen: SeenRequest[] = [];
  /** What its queue gauge reports waiting (`load()`), as a busy engine's would. */
  waiting = 0;
  private readonly server;

  constructor(
    public launch: EngineLaunch,
    script: (req: IncomingMessage, res: ServerResponse, seen: SeenRequest) => void,
  ) {
    this.server = createServer((req, res) => {
      let text = "";
      req.on("data", (c: Buffer) => (text += c.toString()));
      req.on("end", () => {
        const seen: SeenRequest = { body: JSON.parse(text) as SeenRequest["body"], headers: req.headers, closedEarly: false };
        this.seen.push(seen);
        res.on("close", () => void (seen.closedEarly = !res.writableFinished));
        script(req, res, seen);
      });
    });
  }

  async start(): Promise<void> {
    this.url = await listen(this.server, "127.0.0.1", 0);
    this.state = "ready";
    this.accepting = true;
  }

  async load(): Promise<EngineLoad> {
    return { running: 0, waiting: this.waiting, kvUse: 0 };
  }

  async drain(): Promise<DrainResult> {
    this.accepting = false;
    this.state = "draining";
    return { drained: true, running: 0 };
  }

  async stop(): Promise<void> {
    this.accepting = false;
    this.state = "stopped";
    await closeServer(this.server, 0);
  }

  setClock(): void {}
  relabel(instanceId: string, replica: number): void {
    this.launch = { ...this.launch, instanceId, replica };
  }
}

/** A launch of `instance` replica `replica`: llama3.1-8b on GPU `gpu`. */
export const launchOf = (instance: string, replica = 0, gpu = replica, role: EngineLaunch["role"] = "mixed"): EngineLaunch => ({ instanceId: instance, replica, model: "llama3.1-8b", perfModel: "llama3.1-8b", variant: "base", tp: 1, gpus: [gpu], role });

/** A gate scripts can wait on: closed until `open()`. */
export function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Answers an OpenAI chat completion after `delayMs`, with an energy receipt header. */
export const answerAfter = (delayMs: number) => (_req: IncomingMessage, res: ServerResponse) =>
  void setTimeout(() => {
    if (res.destroyed) return;
    res.writeHead(200, { "content-type": "application/json", "x-greenference-energy-j": "1.5" });
    res.end(JSON.stringify({ object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
  }, delayMs);
