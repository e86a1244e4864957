import { launchKey, sameLaunch, type Engine, type EngineDriver, type EngineExitListener, type EngineLaunch } from "../engines/engine.ts";
import type { TrackedGpuBackend } from "../gpu-state/tracked-gpu-backend.ts";
import type { DesiredState } from "./desired-state.ts";

/** What one pass of the applier works on and with. */
export interface ApplyContext {
  engines: Map<string, Engine>;
  gpus: TrackedGpuBackend;
  driver: EngineDriver;
  drainTimeoutMs: number;
  onExit: EngineExitListener;
  log: (message: string) => void;
  /** True once the applier is stopping: the pass starts nothing more. */
  stopping: () => boolean;
}

/**
 * One idempotent pass towards `target`, in order: start the missing engines whose GPUs are free,
 * drain the engines that go (gone from the plan, changed model/TP/GPUs, or failed) and stop them,
 * start the missing engines on the GPUs that freed, then set every GPU's clock lock (or reset
 * it). Steps that fail are returned as messages; the rest is done anyway, so a retry only redoes
 * what failed. Already-right engines and clocks are left alone.
 */
export async function applyOnce(target: DesiredState, ctx: ApplyContext): Promise<string[]> {
  const failures: string[] = [];
  const wanted = new Map(target.launches.map((l) => [launchKey(l), l]));
  const going = [...ctx.engines].filter(([key, e]) => {
    const w = wanted.get(key);
    return !w || !sameLaunch(w, e.launch) || e.state === "failed" || e.state === "stopped";
  });

  // Make-before-break: launches on GPUs no going engine holds start first, so a class keeps the
  // engines of the plan before until its new ones are up; the others (and a replica that changes
  // in place) start once the going engines have stopped.
  const goingKeys = new Set(going.map(([key]) => key));
  const held = new Set(going.flatMap(([, e]) => e.launch.gpus));
  const missing = [...wanted].filter(([key]) => !ctx.engines.has(key) || goingKeys.has(key));
  const startsFirst = ([key, l]: [string, EngineLaunch]) => !goingKeys.has(key) && l.gpus.every((g) => !held.has(g));
  const onFreeGpus = missing.filter(startsFirst);
  const onHeldGpus = missing.filter((m) => !startsFirst(m));

  if (ctx.stopping()) return [...failures, "stopped before starting engines"];
  await startAll(onFreeGpus, target, ctx, failures);
  await Promise.all(
    going.map(async ([key, e]) => {
      if (e.state !== "ready") return;
      const drained = await e.drain(ctx.drainTimeoutMs).catch((error: unknown) => ({ drained: false, running: NaN, error }));
      if (!drained.drained) ctx.log(`engine ${key} still had ${drained.running} request(s) after ${ctx.drainTimeoutMs} ms of draining; stopping it anyway`);
    }),
  );
  await Promise.all(
    going.map(async ([key, e]) => {
      try {
        await e.stop();
        ctx.engines.delete(key);
      } catch (error) {
        failures.push(`stop ${key}: ${(error as Error).message}`);
      }
    }),
  );
  if (ctx.stopping()) return [...failures, "stopped before starting engines"];
  await startAll(onHeldGpus, target, ctx, failures);

  if (ctx.stopping()) return [...failures, "stopped before setting clocks"];
  for (const [gpu, lock] of target.clocks.entries()) {
    const actual = ctx.gpus.lockOf(gpu);
    if (lock?.minMhz === actual?.minMhz && lock?.maxMhz === actual?.maxMhz) continue;
    try {
      if (lock) await ctx.gpus.lockGraphicsClocks(gpu, lock.minMhz, lock.maxMhz);
      else await ctx.gpus.resetGraphicsClocks(gpu);
    } catch (error) {
      failures.push(`${lock ? `lock GPU ${gpu} at ${lock.minMhz}-${lock.maxMhz} MHz` : `reset GPU ${gpu} clocks`}: ${(error as Error).message}`);
    }
  }
  for (const e of ctx.engines.values()) {
    const clock = target.clockOf.get(e.launch.instanceId);
    if (clock) e.setClock(clock);
  }
  return failures;
}

/** Starts `launches` side by side; a start that fails is stopped again and recorded in `failures`. */
async function startAll(launches: ReadonlyArray<[string, EngineLaunch]>, target: DesiredState, ctx: ApplyContext, failures: string[]): Promise<void> {
  await Promise.all(
    launches.map(async ([key, launch]) => {
      if (ctx.engines.has(key)) return;
      const engine = ctx.driver.create(launch, ctx.onExit);
      engine.setClock(target.clockOf.get(launch.instanceId)!);
      ctx.engines.set(key, engine);
      try {
        await engine.start();
      } catch (error) {
        failures.push(`start ${key}: ${(error as Error).message}`);
        await engine.stop().catch(() => undefined);
        ctx.engines.delete(key);
      }
    }),
  );
}

/** Resets every GPU's clocks; returns the failures. */
export async function resetAllClocks(gpus: TrackedGpuBackend, count: number): Promise<string[]> {
  const failures: string[] = [];
  for (let gpu = 0; gpu < count; gpu++) {
    try {
      await gpus.resetGraphicsClocks(gpu);
    } catch (error) {
      failures.push(`reset GPU ${gpu} clocks: ${(error as Error).message}`);
    }
  }
  return failures;
}
