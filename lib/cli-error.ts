/** An error meant for the user of the CLI: printed without a stack trace, exit code 1. */
export class CliError extends Error {
  override name = "CliError";
}

/**
 * `f()`, with what it throws (or, for a promise, rejects with) turned into a CliError of the same
 * message: for calls into the core or the agent whose errors already say what is wrong.
 *
 * @example
 * const llm = asCliError(() => llmSpec("gpt-9")); // throws CliError: unknown model "gpt-9" ...
 * const engines = await asCliError(() => openProfilerEngines(options));
 */
export function asCliError<T>(f: () => T): T {
  try {
    const value = f();
    return (value instanceof Promise ? value.catch(rethrowAsCliError) : value) as T;
  } catch (error) {
    return rethrowAsCliError(error);
  }
}

function rethrowAsCliError(error: unknown): never {
  throw error instanceof CliError ? error : new CliError((error as Error).message);
}
