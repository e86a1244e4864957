/** Placeholder replaced below */
export async function runScheduled(_controller: ScheduledController, _env: Env): Promise<void> {}
