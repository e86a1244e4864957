import highsLoader, { type Highs } from "highs";
import highsWasm from "highs/build/highs.wasm";
import type { LpSolver } from "../core/ports/lp-solver.ts";
import { highsSolver } from "./highs-solver.ts";

/** Emscripten's hook for a caller that instantiates the module itself (not in highs' types). */
interface InstantiateHook {
  instantiateWasm(imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance) => void): object;
}

let loaded: Promise<LpSolver> | undefined;

/**
 * HiGHS in workerd, which compiles no WebAssembly from bytes at run time: wrangler's CompiledWasm
 * rule turns the `.wasm` import into a compiled `WebAssembly.Module` at upload, and Emscripten's
 * `instantiateWasm` hook instantiates it instead of reading highs.wasm from a path. One instance
 * per isolate (about 20 MB of WebAssembly memory), made on first use: isolates that only route
 * requests never make one, though workerd compiles the module whenever an isolate starts (its
 * cost: `greenference bench edge-start`). A load that fails is tried again on the next call.
 *
 * @example
 * const solver = await workerHighsSolver();
 * solver.solve(model);
 */
export function workerHighsSolver(): Promise<LpSolver> {
  const hook: InstantiateHook = {
    instantiateWasm(imports, receive) {
      receive(new WebAssembly.Instance(highsWasm, imports));
      return {};
    },
  };
  loaded ??= highsSolver(() => highsLoader(hook as never) as Promise<Highs>).catch((error: unknown) => {
    loaded = undefined;
    throw error;
  });
  return loaded;
}
