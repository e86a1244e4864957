/**
 * An energy counter built from power samples, for drivers that expose no counter: the trapezoid
 * rule between consecutive samples of one device. Only as good as the sampling: a spike between
 * two samples is missed, so sample at least every few seconds.
 *
 * @example
 * const energy = new PowerIntegrator();
 * energy.sample(0, 100, 0); // 0 J
 * energy.sample(0, 300, 2000); // 400 J
 */
export class PowerIntegrator {
  private readonly last = new Map<number, { ms: number; watts: number; joules: number }>();

  /** Adds a sample of `watts` taken at `ms` for `device` and returns the joules so far (0 at the first). */
  sample(device: number, watts: number, ms: number): number {
    const previous = this.last.get(device);
    const dtS = previous ? Math.max(0, ms - previous.ms) / 1e3 : 0;
    const joules = previous ? previous.joules + ((previous.watts + watts) / 2) * dtS : 0;
    this.last.set(device, { ms: Math.max(ms, previous?.ms ?? ms), watts, joules });
    return joules;
  }
}
