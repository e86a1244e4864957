/**
 * Runs `start` (which picks its ports with `freePort`) again, up to `attempts` times in all, when it
 * fails because a port that was free a moment before was taken meanwhile (another process started
 * in between, as parallel test files and wrangler's own workerd do). Any other error is thrown at once.
 *
 * @example
 * const edge = await retryOnPortRace(async () => startWranglerDev({ port: await freePort(), ... }));
 */
export async function retryOnPortRace<T>(start: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if (attempt >= attempts || !/address already in use|EADDRINUSE/i.test(String(error))) throw error;
    }
  }
}
