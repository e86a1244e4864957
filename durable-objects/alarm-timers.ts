/**
 * Every timer of a Durable Object on its one alarm: a table of due times by name, kept in storage,
 * with the alarm set to the earliest. `takeDue` (from `alarm()`) removes and returns the timers
 * that are due and re-arms the alarm for the rest.
 *
 * @example
 * await timers.schedule("planner-s", Date.now() + 5000);
 * // in alarm(): for (const name of await timers.takeDue(Date.now())) await handlers[name]();
 */
export class AlarmTimers {
  private due: Record<string, number> = {};

  constructor(private readonly storage: DurableObjectStorage) {}

  async load(): Promise<void> {
    this.due = (await this.storage.get<Record<string, number>>("timers")) ?? {};
  }

  /** When a timer is due, or undefined when it is not set. */
  dueAt(name: string): number | undefined {
    return this.due[name];
  }

  /** Sets (or moves) a timer. */
  async schedule(name: string, atMs: number): Promise<void> {
    this.due = { ...this.due, [name]: atMs };
    await this.store();
  }

  /** Removes a timer; the alarm follows the rest. */
  async cancel(name: string): Promise<void> {
    if (!(name in this.due)) return;
    const { [name]: _gone, ...rest } = this.due;
    this.due = rest;
    await this.store();
  }

  /**
   * Removes the timers due at `nowMs` and returns their names, earliest first; the alarm is set
   * again for the rest (an alarm that fired early, or was run by hand, loses no timer). The table
   * is read from storage, its source of truth.
   */
  async takeDue(nowMs: number): Promise<string[]> {
    await this.load();
    const names = Object.entries(this.due).filter(([, t]) => t <= nowMs).sort((a, b) => a[1] - b[1]).map(([n]) => n);
    this.due = Object.fromEntries(Object.entries(this.due).filter(([n]) => !names.includes(n)));
    await this.store();
    return names;
  }

  private async store(): Promise<void> {
    await this.storage.put("timers", this.due);
    const next = Math.min(...Object.values(this.due));
    if (Number.isFinite(next)) await this.storage.setAlarm(next);
    else await this.storage.deleteAlarm();
  }
}
