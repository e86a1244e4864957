/**
 * The environment engine processes get: the agent's own without the agent's configuration and
 * secrets. Every GREENFERENCE_* variable goes (the agent's options, its tokens and the files
 * holding them among them: an engine needs none of them), and so does any variable, whatever its
 * name, whose value is one of `secrets` (a token the operator exported under another name).
 *
 * @example
 * engineEnvironment({ PATH: "/usr/bin", GREENFERENCE_TOKEN: "gfs_a_00", HF_TOKEN: "hf_x" }, ["gfs_a_00"]);
 * // { PATH: "/usr/bin", HF_TOKEN: "hf_x" }
 */
export function engineEnvironment(base: NodeJS.ProcessEnv, secrets: readonly string[]): NodeJS.ProcessEnv {
  const secretValues = new Set(secrets.filter((s) => s !== ""));
  return Object.fromEntries(Object.entries(base).filter(([name, value]) => !name.startsWith("GREENFERENCE_") && !(value !== undefined && secretValues.has(value.trim()))));
}
