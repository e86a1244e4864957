import { launchKey, sameLaunch, type Engine, type EngineDriver, type EngineExitListener, type EngineLaunch } from "../engines/engine.ts";
import type { TrackedGpuBackend } from "../gpu-state/tracked-gpu-backend.ts";
import { clockBounds } from "../../src/core/model/clock-grid.ts";
import type { ClockSetting } from "../../src/core/schemas/plan.ts";
import type { DesiredState } from "./desired-state.ts";
import { deviceForSlot, migDevicesOf, migModeOf, reshape, sameLayout, type MigLayout } from "./mig-layout.ts";

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
 * One idempotent pass towards `target`, in order: keep the ready engines the plan runs unchanged
 * under another label (`keepRelabelled`), start the missing engines whose GPUs are free,
 * drain the engines that go (gone from the plan, changed model/TP/GPUs, on a GPU whose MIG layout
 * changes, or failed) and stop them, end those an earlier agent run left on the GPUs whose MIG
 * layout changes (the driver destroys no MIG instance in use) and carve them, start the missing
 * engines on the GPUs that freed (an engine on a slice gets its MIG device), then set every GPU's
 * clock lock (or reset it). Steps that fail are returned as messages; the rest is done anyway, so a
 * retry only redoes what failed. Already-right engines, layouts and clocks are left alone.
 */
export async function applyOnce(target: DesiredState, ctx: ApplyContext): Promise<string[]> {
  const failures: string[] = [];
  const wanted = new Map(target.launches.map((l) => [launchKey(l), l]));
  const layouts = await migLayouts(target, ctx, failures);
  const reshaped = new Set([...layouts].filter(([, l]) => !l.same).map(([g]) => g));
  keepRelabelled(wanted, reshaped, ctx);
  const going = [...ctx.engines].filter(([key, e]) => {
    const w = wanted.get(key);
    return !w || !sameLaunch(w, e.launch) || e.state === "failed" || e.state === "stopped" || e.launch.gpus.some((g) => reshaped.has(g));
  });

  // Make-before-break: launches on GPUs no going engine holds start first, so a class keeps the
  // engines of the plan before until its new ones are up; the others (and a replica that changes
  // in place) start once the going engines have stopped.
  const goingKeys = new Set(going.map(([key]) => key));
  const held = new Set([...going.flatMap(([, e]) => e.launch.gpus), ...reshaped]);
  const missing = [...wanted].filter(([key]) => !ctx.engines.has(key) || goingKeys.has(key));
  const startsFirst = ([key, l]: [string, EngineLaunch]) => !goingKeys.has(key) && l.gpus.every((g) => !held.has(g));
  const onFreeGpus = missing.filter(startsFirst);
  const onHeldGpus = missing.filter((m) => !startsFirst(m));

  if (ctx.stopping()) return [...failures, "stopped before starting engines"];
  await drainAtTop(going.map(([, e]) => e), ctx, failures);
  await startAll(onFreeGpus, target, ctx, failures, (l) => l.mig && deviceForSlot(layouts.get(l.gpus[0]!)?.devices ?? [], target.mig.get(l.gpus[0]!) ?? [], l.mig.slot));
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
  await endOrphansOn(reshaped, ctx, failures);
  const carved = await carve(reshaped, target, ctx, failures);
  await startAll(onHeldGpus.filter(([, l]) => l.gpus.every((g) => !reshaped.has(g) || carved.has(g))), target, ctx, failures, (l) => l.mig && deviceForSlot(carved.get(l.gpus[0]!) ?? layouts.get(l.gpus[0]!)?.devices ?? [], target.mig.get(l.gpus[0]!) ?? [], l.mig.slot));

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
    if (clock) setClockOf(e, clock);
  }
  return failures;
}

/** The clock setting each engine was last given here (its plan's, until a new plan relabels or ends it). */
const givenClock = new WeakMap<Engine, ClockSetting>();

function setClockOf(e: Engine, clock: ClockSetting): void {
  givenClock.set(e, clock);
  e.setClock(clock);
}

/**
 * Locks the GPUs of the engines about to drain at the top of the clock range their plan gave them:
 * their controllers stop with the plan (MIAD may have left them at the lowest clock), and what they
 * still serve has to finish within the drain timeout, within the power their plan was given. Not
 * on MIG slices: a clock is the whole GPU's, and other slices stay.
 */
async function drainAtTop(going: readonly Engine[], ctx: ApplyContext, failures: string[]): Promise<void> {
  for (const e of going) {
    const clock = givenClock.get(e);
    if (e.state !== "ready" || !clock || e.launch.mig) continue;
    const top = clockBounds(clock).maxMhz;
    for (const gpu of e.launch.gpus) {
      const lock = ctx.gpus.lockOf(gpu);
      if (lock?.minMhz === top && lock.maxMhz === top) continue;
      try {
        await ctx.gpus.lockGraphicsClocks(gpu, top, top);
      } catch (error) {
        failures.push(`lock GPU ${gpu} at ${top} MHz to drain ${launchKey(e.launch)}: ${(error as Error).message}`);
      }
    }
  }
}

/**
 * Keeps the engines the plan runs unchanged under another label: a wanted launch with no engine
 * of its own under its key (`sameLaunch`) takes a ready engine that would go (not wanted under its
 * own key, or wanted there as another engine) and runs exactly that launch but for its instance id
 * and replica (an engine serves any class; only the label differs: a policy switch names instances
 * its own way, a re-plan gives an engine another class's id). The engine moves to the launch's key
 * and takes its label, so it is neither drained nor started again: a 70B engine loads for minutes.
 * Each engine is taken once; ids may swap. An engine still under a key that a kept one takes is
 * going anyway, and waits out its drain and stop under a key of its own (`<key>~leaving`). Engines
 * on GPUs whose MIG layout changes, failed, stopped, starting, draining or not answering are not
 * kept, nor one that would run another argv under the new label (`canTakeLabel`: a command using
 * `{replica}`), which an agent restarted after a crash would not adopt under it either.
 */
function keepRelabelled(wanted: ReadonlyMap<string, EngineLaunch>, reshaped: ReadonlySet<number>, ctx: ApplyContext): void {
  const kept = (key: string, l: EngineLaunch) => {
    const e = ctx.engines.get(key);
    return e !== undefined && sameLaunch(l, e.launch);
  };
  const unmatched = [...wanted].filter(([key, l]) => !kept(key, l));
  if (unmatched.length === 0) return;
  const donors = [...ctx.engines].filter(([key, e]) => {
    const own = wanted.get(key);
    const goes = !own || !sameLaunch(own, e.launch);
    return goes && e.state === "ready" && !e.unresponsive && !e.launch.gpus.some((g) => reshaped.has(g));
  });
  const moves: { from: string; to: string; launch: EngineLaunch; engine: Engine }[] = [];
  for (const [to, launch] of unmatched) {
    const same = donors.filter(([, e]) => sameLaunch(launch, e.launch));
    const taker = same.find(([, e]) => e.canTakeLabel?.(launch.instanceId, launch.replica) ?? true);
    if (!taker) {
      for (const [from] of same) ctx.log(`not keeping engine ${from} as ${to}: its engine command depends on the replica number ({replica}), so it is restarted`);
      continue;
    }
    const [from, engine] = donors.splice(donors.indexOf(taker), 1)[0]!;
    moves.push({ from, to, launch, engine });
  }
  // Every kept engine leaves its key first, so that ids can swap.
  for (const m of moves) ctx.engines.delete(m.from);
  for (const m of moves) {
    const occupant = ctx.engines.get(m.to);
    if (occupant) {
      let leaving = `${m.to}~leaving`;
      for (let n = 2; ctx.engines.has(leaving); n++) leaving = `${m.to}~leaving${n}`;
      ctx.engines.set(leaving, occupant);
    }
    m.engine.relabel(m.launch.instanceId, m.launch.replica);
    ctx.engines.set(m.to, m.engine);
    ctx.log(`kept engine ${m.from} as ${m.to}: the plan runs it unchanged under another label, so it is not restarted`);
  }
}

/**
 * Per GPU that is or should be carved into MIG slices, or that the plan runs whole: its devices
 * now and whether its layout is the one wanted. A GPU to run whole that an earlier plan (or an
 * agent that crashed mid-change) left in MIG mode is reshaped too; where its MIG state cannot be
 * read it is taken as whole, as a GPU without MIG is.
 */
async function migLayouts(target: DesiredState, ctx: ApplyContext, failures: string[]) {
  const carvedNow = new Set<number>();
  for (const e of ctx.engines.values()) if (e.launch.mig) carvedNow.add(e.launch.gpus[0]!);
  const carving = new Set([...target.mig.keys(), ...carvedNow]);
  const whole = new Set(target.launches.filter((l) => !l.mig).flatMap((l) => l.gpus).filter((g) => !carving.has(g)));
  const out = new Map<number, MigLayout & { same: boolean }>();
  for (const g of [...carving, ...whole]) {
    try {
      const migMode = (await migModeOf(ctx.gpus, g)).current;
      // Out of MIG mode a GPU has no MIG devices: a whole GPU's check is one driver call.
      const layout = { devices: migMode || carving.has(g) ? await migDevicesOf(ctx.gpus, g) : [], migMode };
      out.set(g, { ...layout, same: sameLayout(layout, target.mig.get(g) ?? []) });
    } catch (error) {
      if (carving.has(g)) failures.push(`read MIG layout of GPU ${g}: ${(error as Error).message}`);
    }
  }
  return out;
}

/** Ends the engines an earlier agent run left on `gpus`, before they are carved: their MIG instances cannot be destroyed while in use. */
async function endOrphansOn(gpus: ReadonlySet<number>, ctx: ApplyContext, failures: string[]): Promise<void> {
  if (gpus.size === 0 || !ctx.driver.endOrphansOn) return;
  try {
    await ctx.driver.endOrphansOn([...gpus]);
  } catch (error) {
    failures.push(`end the engines an earlier run left on GPUs ${[...gpus].join(",")}: ${(error as Error).message}`);
  }
}

/** Carves each GPU of `gpus` into its wanted slices; returns the devices of each GPU carved. */
async function carve(gpus: ReadonlySet<number>, target: DesiredState, ctx: ApplyContext, failures: string[]) {
  const carved = new Map<number, MigLayout["devices"]>();
  for (const g of gpus) {
    const wanted = target.mig.get(g) ?? [];
    try {
      await reshape(ctx.gpus, g, wanted);
      carved.set(g, await migDevicesOf(ctx.gpus, g));
    } catch (error) {
      failures.push(`${wanted.length > 0 ? `carve GPU ${g} into ${wanted.join(", ")}` : `return GPU ${g} whole`}: ${(error as Error).message}`);
    }
  }
  return carved;
}

/** Starts `launches` side by side (an engine on a MIG slice with its device); a start that fails is stopped again and recorded in `failures`. */
async function startAll(launches: ReadonlyArray<[string, EngineLaunch]>, target: DesiredState, ctx: ApplyContext, failures: string[], migDevice: (l: EngineLaunch) => string | undefined): Promise<void> {
  await Promise.all(
    launches.map(async ([key, planned]) => {
      if (ctx.engines.has(key)) return;
      const device = migDevice(planned);
      if (planned.mig && !device) return void failures.push(`start ${key}: no ${planned.mig.profile} MIG device for slot ${planned.mig.slot} of GPU ${planned.gpus[0]}`);
      const launch = device ? { ...planned, migDevice: device } : planned;
      const engine = ctx.driver.create(launch, ctx.onExit);
      setClockOf(engine, target.clockOf.get(launch.instanceId)!);
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
