/** A `.wasm` import in the Worker: wrangler's CompiledWasm rule makes it a compiled module. */
declare module "*.wasm" {
  const module: WebAssembly.Module;
  export default module;
}
