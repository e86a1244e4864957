import { LocalStack } from "../../lib/stack/local-stack.ts";
import { smallStackConfig, type StackConfig } from "../../lib/stack/stack-config.ts";

/** Output of the stack's processes, kept for a failing test's message (printed with GREENFERENCE_E2E_VERBOSE=1). */
export const stackLog: string[] = [];

/**
 * The local stack as the e2e tests run it: a free edge port, its own wrangler state, 3 sites of 4
 * simulated GPUs, engines 10x faster than real time so requests take fractions of a second.
 */
export function startTestStack(over: Partial<StackConfig> = {}, options: { autopilot?: boolean } = {}): Promise<LocalStack> {
  const config = smallStackConfig({ maxOutputTokens: 64, ...over });
  return LocalStack.start({
    config,
    load: false,
    autopilot: options.autopilot,
    log: (line) => {
      stackLog.push(line);
      if (process.env.GREENFERENCE_E2E_VERBOSE) console.error(line);
    },
  });
}
