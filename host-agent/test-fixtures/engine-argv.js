// What the stand-in engines read of the engine argv the agent gives them.

/** The value after `flag` in `argv`, or `fallback`. */
export const flagValue = (argv, flag, fallback) => {
  const i = argv.indexOf(flag);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
};

/** Where the engine is to listen: `--port` (8000) on `--host` (127.0.0.1). */
export const listenAddress = (argv) => ({ port: Number(flagValue(argv, "--port", "8000")), host: flagValue(argv, "--host", "127.0.0.1") });
