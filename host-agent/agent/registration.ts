import type { AgentRegistration } from "../../src/core/schemas/agent-messages.ts";
import { backoffMs, logsFailure, sleep, type Backoff } from "../util/backoff.ts";
import type { EdgeClient } from "../protocol/edge-client.ts";

/**
 * Registers with the edge, retrying with backoff until it succeeds or `signal` aborts; returns
 * whether it registered. Plans and heartbeats do not wait for it.
 */
export async function registerUntilDone(edge: Pick<EdgeClient, "register">, registration: AgentRegistration, opts: { backoff: Backoff; signal: AbortSignal; log: (m: string) => void }): Promise<boolean> {
  for (let attempt = 1; !opts.signal.aborted; attempt++) {
    try {
      await edge.register(registration);
      return true;
    } catch (error) {
      if (logsFailure(attempt)) opts.log(`registration failed (attempt ${attempt}; retrying): ${(error as Error).message}`);
      await sleep(backoffMs(opts.backoff, attempt), opts.signal);
    }
  }
  return false;
}
