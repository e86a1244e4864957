import { z } from "zod";
import { CarbonBudget } from "../src/core/schemas/carbon-budget.ts";
import { failure, invalid, success, type Outcome } from "./outcome.ts";

/** What an operator asks for when creating an API key. */
export const NewApiKey = z.strictObject({
  name: z.string().min(1).max(100),
  /** Requests per minute (token bucket of that size, refilled evenly); null for no limit. */
  requestsPerMinute: z.number().int().positive().max(1_000_000).nullable().default(null),
  /** Prompt plus completion tokens per minute (admitted on an estimate, settled on usage); null for no limit. */
  tokensPerMinute: z.number().int().positive().max(1_000_000_000).nullable().default(null),
  /** gCO2e per UTC day or month (paced, then refused with 429 carbon_budget_exceeded); null for none. */
  carbonBudget: CarbonBudget.nullable().default(null),
});
export type NewApiKey = z.infer<typeof NewApiKey>;

/** A stored key: only the SHA-256 of the key is kept. */
export interface ApiKeyRecord extends NewApiKey {
  id: string;
  hash: string;
  createdAtMs: number;
}

/** What the edge needs to check a key and apply its limit. */
export interface ApiKeyCheck {
  hash: string;
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  carbonBudget: CarbonBudget | null;
}

const KEY_ID = /^[a-z0-9]{6,32}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** The API keys ControlDO holds, one storage entry each. */
export class ApiKeyStore {
  private keys = new Map<string, ApiKeyRecord>();

  constructor(private readonly storage: DurableObjectStorage) {}

  async load(): Promise<void> {
    for (const [, record] of await this.storage.list<ApiKeyRecord>({ prefix: "apikey:" })) this.keys.set(record.id, { ...record, tokensPerMinute: record.tokensPerMinute ?? null, carbonBudget: record.carbonBudget ?? null });
  }

  list(): ApiKeyRecord[] {
    return [...this.keys.values()].sort((a, b) => a.createdAtMs - b.createdAtMs);
  }

  /** Per key id, its hash and limit: the part of the store the edge caches. */
  checks(): Record<string, ApiKeyCheck> {
    return Object.fromEntries([...this.keys.values()].map((k) => [k.id, { hash: k.hash, requestsPerMinute: k.requestsPerMinute, tokensPerMinute: k.tokensPerMinute, carbonBudget: k.carbonBudget }]));
  }

  async create(id: string, hash: string, input: unknown, nowMs: number): Promise<Outcome<ApiKeyRecord>> {
    const parsed = NewApiKey.safeParse(input);
    if (!parsed.success) return invalid("API key request", parsed.error);
    if (!KEY_ID.test(id) || !SHA256_HEX.test(hash)) return failure(400, "malformed key id or hash");
    if (this.keys.has(id)) return failure(409, `API key id "${id}" exists`);
    const record: ApiKeyRecord = { id, hash, ...parsed.data, createdAtMs: nowMs };
    await this.storage.put(`apikey:${id}`, record);
    this.keys.set(id, record);
    return success(record);
  }

  /** Sets (or, with null, removes) a key's carbon budget. */
  async setCarbonBudget(id: string, input: unknown): Promise<Outcome<ApiKeyRecord>> {
    const record = this.keys.get(id);
    if (!record) return failure(404, `no API key "${id}"`);
    const parsed = CarbonBudget.nullable().safeParse(input);
    if (!parsed.success) return invalid("carbon budget", parsed.error);
    const updated = { ...record, carbonBudget: parsed.data };
    await this.storage.put(`apikey:${id}`, updated);
    this.keys.set(id, updated);
    return success(updated);
  }

  async revoke(id: string): Promise<Outcome<{ id: string }>> {
    if (!this.keys.has(id)) return failure(404, `no API key "${id}"`);
    await this.storage.delete(`apikey:${id}`);
    this.keys.delete(id);
    return success({ id });
  }
}
