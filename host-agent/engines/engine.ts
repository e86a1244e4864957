import { z } from "zod";
import { MigSlice } from "../../src/core/schemas/mig.ts";
import type { KvHandoffProtocol } from "../../src/core/schemas/kv-transfer.ts";
import { InstanceRole, type ClockSetting } from "../../src/core/schemas/plan.ts";
import type { InstanceState } from "../../src/core/schemas/telemetry.ts";
import type { Unresponsive } from "./liveness.ts";

/** The engines the agent can drive. */
export const EngineKind = z.enum(["vllm", "sglang", "sim"]);
export type EngineKind = z.infer<typeof EngineKind>;

/**
 * One replica of a planned instance, as the applier asks a driver to run it. A schema, as an
 * engine's pid file keeps the launch (`EnginePidRecord`): what `sameLaunch` compares must be there
 * for a later agent run to adopt the engine.
 */
export const EngineLaunch = z.object({
  instanceId: z.string(),
  /** 0-based replica number within the planned instance. */
  replica: z.number().int().nonnegative(),
  /** The fleet model's API id (what clients ask for). */
  model: z.string(),
  /** The name the engine serves the model under (`--served-model-name`); the API id when absent. */
  servedName: z.string().optional(),
  /** What the engine loads: a Hugging Face repo id or a path; the API id when absent. */
  weights: z.string().optional(),
  /** The performance model's key for it; absent when the model is unknown to the performance model. */
  perfModel: z.string().optional(),
  variant: z.string(),
  tp: z.number().int().positive(),
  /** The site's GPU indices this replica runs on (tp of them). */
  gpus: z.array(z.number().int().nonnegative()).readonly(),
  role: InstanceRole,
  /** On a MIG slice of its GPU: the profile and the slice's place among the GPU's slices (as the plan carves them). */
  mig: z.object({ profile: MigSlice, slot: z.number().int().nonnegative() }).optional(),
  /** The MIG device's UUID once the slice exists (the applier fills it in): the engine's CUDA_VISIBLE_DEVICES. */
  migDevice: z.string().optional(),
});
export type EngineLaunch = z.infer<typeof EngineLaunch>;

/** The name a replica's engine serves. */
export const servedNameOf = (l: Pick<EngineLaunch, "model" | "servedName">): string => l.servedName ?? l.model;
/** What a replica's engine loads. */
export const weightsOf = (l: Pick<EngineLaunch, "model" | "weights">): string => l.weights ?? l.model;

/** Key of a replica in the applier's tables: `<instance id>#<replica>`. */
export const launchKey = (l: Pick<EngineLaunch, "instanceId" | "replica">) => `${l.instanceId}#${l.replica}`;

/** Two launches run the same engine (only the clock, and the label, instance id and replica, may differ between them). */
export function sameLaunch(a: EngineLaunch, b: EngineLaunch): boolean {
  const sameSlice = a.mig?.profile === b.mig?.profile && a.mig?.slot === b.mig?.slot;
  const sameIdentity = servedNameOf(a) === servedNameOf(b) && weightsOf(a) === weightsOf(b) && a.perfModel === b.perfModel;
  return a.model === b.model && sameIdentity && a.variant === b.variant && a.tp === b.tp && a.role === b.role && sameSlice && a.gpus.length === b.gpus.length && a.gpus.every((g, i) => g === b.gpus[i]);
}

/** An engine's queue and cache, from its metrics. `kvUse` is the fraction of KV cache in use. */
export interface EngineLoad {
  running: number;
  waiting: number;
  kvUse: number;
  /** Set when the read failed and this is the last good reading, this many ms old (`LoadHold`); absent for a fresh one. */
  heldMs?: number;
}

/** What `drain` achieved: whether the engine ran empty before the timeout. */
export interface DrainResult {
  drained: boolean;
  running: number;
}

/**
 * One running engine replica (vLLM, SGLang or simulated) behind an OpenAI API. Lifecycle:
 * `start` (resolves once healthy) -> `drain` (stop admitting, wait for running to reach 0) ->
 * `stop`. Methods may throw `EngineError`.
 */
export interface Engine {
  readonly kind: EngineKind;
  readonly launch: EngineLaunch;
  readonly state: InstanceState;
  /** Base URL of its OpenAI API (`http://127.0.0.1:8100`), once started. */
  readonly url: string | undefined;
  /** False once draining or stopped, or while it does not answer: the site gateway must send it nothing new. */
  readonly accepting: boolean;
  /**
   * Set while it runs but does not answer its health checks (a hung process): it takes no new
   * requests and its instance is reported failed until it answers. Engines in the agent's own
   * process (simulated) have none.
   */
  readonly unresponsive?: Unresponsive;
  /**
   * Aborts, its reason saying why, when it stops answering its health checks: the site gateway then
   * ends the requests it has in flight there rather than wait for the restart. A fresh, unaborted
   * one once it answers again. Absent where `unresponsive` is.
   */
  readonly stoppedAnswering?: AbortSignal;
  /**
   * Whether it records each request it finishes in the agent's request log itself, as the
   * simulated engine does (with the request's energy); the site gateway records the others'.
   */
  readonly recordsRequests: boolean;
  /**
   * How it takes part in the gateway's prefill/decode KV handoff, if it does: a prefill replica
   * prefills for a remote decode, a decode replica takes the KV and decodes. vLLM's speak
   * `kv-transfer-params`, SGLang's `bootstrap` (see `KvHandoffProtocol`).
   */
  readonly kvHandoff?: KvHandoffProtocol;
  /** Where a `bootstrap` prefill replica's bootstrap server listens, for its decode partners to find the KV. */
  readonly kvBootstrap?: { host: string; port: number };
  start(): Promise<void>;
  /**
   * Its queue and cache now. A failed read gives the last good reading (`heldMs` set) for up to
   * `ENGINE_LOAD_HOLD_MS`, then rejects: the reading is unknown, and each caller decides what is
   * safe without it.
   */
  load(): Promise<EngineLoad>;
  drain(timeoutMs: number): Promise<DrainResult>;
  /** Stops the engine (a real process: SIGTERM, then SIGKILL after a grace period). Idempotent. */
  stop(): Promise<void>;
  /**
   * The plan's clock setting for this instance. The GPU clocks themselves are locked by the
   * applier; a simulated engine uses the setting to bound its per-iteration frequency hook.
   */
  setClock(clock: ClockSetting): void;
  /**
   * Takes another label: from now on it is replica `replica` of instance `instanceId` (its
   * `launch` says so; nothing else of it changes, and nothing is restarted). The applier calls it
   * when a new plan runs exactly this engine (`sameLaunch`) under another instance id or replica
   * number. A process engine rewrites its pid file, so a later agent run adopts it under that label.
   */
  relabel(instanceId: string, replica: number): void;
  /**
   * Whether it can take that label and still run exactly as it does: false for a process engine
   * whose command uses `{replica}` and the number changes (it would run another argv), so the
   * applier restarts it rather than keep it. Absent: any label.
   */
  canTakeLabel?(instanceId: string, replica: number): boolean;
}

/** Told when an engine stops on its own (crash, OOM kill) rather than through `stop`. */
export type EngineExitListener = (engine: Engine, reason: string) => void;

/** Makes engines of one kind; the applier holds one driver. */
export interface EngineDriver {
  readonly kind: EngineKind;
  /** Why this host cannot run `launch` (an unknown model for the simulator, ...), or undefined. */
  check(launch: EngineLaunch): string | undefined;
  create(launch: EngineLaunch, onExit: EngineExitListener): Engine;
  /**
   * Ends the engines an earlier agent run left on `gpus` and resolves once they have gone: the
   * applier's first step before it changes a GPU's MIG layout, which the driver refuses while
   * anything runs on its slices. Absent where engines cannot outlive the agent.
   */
  endOrphansOn?(gpus: readonly number[]): Promise<void>;
}

/** An engine failed to start, answer or stop; the message names the replica. */
export class EngineError extends Error {
  override readonly name = "EngineError";
}
