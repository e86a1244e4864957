import { ProfileTable, type ProfileRow } from "../src/core/schemas/profile.ts";
import { invalid, success, type Outcome } from "./outcome.ts";

/** What the admin API answers about the stored table (the rows themselves stay inside). */
export interface ProfileSummary {
  rows: number;
  source: ProfileTable["source"];
  models: string[];
  gpus: string[];
  tps: number[];
  classes: string[];
  storedAtMs: number;
}

/** Rows per storage entry: a table of a few thousand rows stays well under the per-value limit. */
const ROWS_PER_CHUNK = 400;

/**
 * The profile table the fleet planners plan on (virtual, from `greenference profile`, or
 * measured on GPUs), kept in ControlDO storage in chunks and read lazily: the planner cron needs
 * it, the request path never does.
 */
export class ProfileStore {
  private cached: { rows: ProfileRow[]; summary: ProfileSummary } | null | undefined;

  constructor(private readonly storage: DurableObjectStorage) {}

  /** Replaces the table after validating it (and, with `refuse`, asking it why not); a bad or refused table changes nothing. */
  async put(input: unknown, nowMs: number, refuse?: (rows: ProfileRow[]) => Outcome<never> | null): Promise<Outcome<ProfileSummary>> {
    const parsed = ProfileTable.safeParse(input);
    if (!parsed.success) return invalid("profile table", parsed.error);
    const rows = parsed.data.rows;
    const refused = refuse?.(rows);
    if (refused) return refused;
    const summary = summarise(parsed.data, nowMs);
    // New rows go under a new generation and the summary switches to it last, so a table is never half-replaced.
    const previous = await this.storage.get<StoredSummary>("profile:summary");
    const generation = (previous?.generation ?? 0) + 1;
    const chunks = Math.ceil(rows.length / ROWS_PER_CHUNK);
    const rowEntries = Array.from({ length: chunks }, (_, i) => [chunkKey(generation, i), rows.slice(i * ROWS_PER_CHUNK, (i + 1) * ROWS_PER_CHUNK)] as const);
    for (const batch of batches(rowEntries)) await this.storage.put(Object.fromEntries(batch));
    await this.storage.put("profile:summary", { ...summary, generation, chunks } satisfies StoredSummary);
    if (previous) for (const batch of batches(chunkKeys(previous))) await this.storage.delete(batch);
    this.cached = { rows, summary };
    return success(summary);
  }

  /** The stored rows, or null before a table was uploaded. */
  async rows(): Promise<ProfileRow[] | null> {
    return (await this.load())?.rows ?? null;
  }

  async summary(): Promise<ProfileSummary | null> {
    return (await this.load())?.summary ?? null;
  }

  private async load() {
    if (this.cached !== undefined) return this.cached;
    const stored = await this.storage.get<StoredSummary>("profile:summary");
    if (!stored) return (this.cached = null);
    const { chunks: _chunks, generation: _generation, ...summary } = stored;
    const rows: ProfileRow[] = [];
    for (const keys of batches(chunkKeys(stored))) {
      const parts = await this.storage.get<ProfileRow[]>(keys);
      for (const key of keys) rows.push(...(parts.get(key) ?? []));
    }
    return (this.cached = { rows, summary });
  }
}

interface StoredSummary extends ProfileSummary {
  generation: number;
  chunks: number;
}

const chunkKey = (generation: number, i: number) => `profile:rows:${generation}:${i}`;
const chunkKeys = (s: StoredSummary) => Array.from({ length: s.chunks }, (_, i) => chunkKey(s.generation, i));

/** Batched storage get, put and delete take at most 128 keys per call. */
function batches<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += 128) out.push(items.slice(i, i + 128));
  return out;
}

function summarise(table: ProfileTable, nowMs: number): ProfileSummary {
  const distinct = <T>(f: (r: ProfileRow) => T) => [...new Set(table.rows.map(f))];
  return {
    rows: table.rows.length,
    source: table.source,
    models: distinct((r) => r.model),
    gpus: distinct((r) => r.gpu),
    tps: distinct((r) => r.tp).sort((a, b) => a - b),
    classes: distinct((r) => r.classId as string),
    storedAtMs: nowMs,
  };
}
