import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** test-fixtures/fake-engine.js, runnable as `node <path> ...`. */
export const FAKE_ENGINE = fileURLToPath(new URL("../test-fixtures/fake-engine.js", import.meta.url));
/** test-fixtures/lost-port-engine.js: an engine that loses its port to a stranger it starts, which answers health checks after the engine exited. */
export const LOST_PORT_ENGINE = fileURLToPath(new URL("../test-fixtures/lost-port-engine.js", import.meta.url));

/** One JSON line of the fake engine's event log. */
export interface FakeEngineEvent {
  pid: number;
  event: "start" | "request" | "signal";
  argv?: string[];
  cuda?: string | null;
  /** VLLM_NIXL_SIDE_CHANNEL_PORT as the engine got it (start events). */
  nixlPort?: string | null;
  /** Names of the engine's environment variables (start events). */
  env?: string[];
  signal?: string;
  running?: number;
}

/** A temp dir with the fake engine's log (and room for the agent's engine files); `env()` is the environment engines should get. */
export function fakeEngineLog() {
  const dir = mkdtempSync(join(tmpdir(), "fake-engine-"));
  const path = join(dir, "events.jsonl");
  return {
    dir,
    env: (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({ ...process.env, FAKE_ENGINE_LOG: path, ...extra }),
    // A line an engine is still writing (no newline yet) is left for a later read.
    events: (): FakeEngineEvent[] => (existsSync(path) ? readFileSync(path, "utf8").split("\n").slice(0, -1).filter(Boolean).map((l) => JSON.parse(l) as FakeEngineEvent) : []),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The command template that runs the fake engine the way `vllm serve` is run by default (vllmFlavor). */
export const FAKE_VLLM_COMMAND = `${process.execPath} ${FAKE_ENGINE} serve {weights} --served-model-name {served} --tensor-parallel-size {tp} --host {host} --port {port}`;
