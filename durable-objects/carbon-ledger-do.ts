import { DurableObject } from "cloudflare:workers";
import { budgetPeriod, carbonPace, type CarbonPace } from "../src/core/budget/carbon-pacing.ts";
import type { CarbonBudget } from "../src/core/schemas/carbon-budget.ts";
import { SettledReceipt } from "../src/core/schemas/settled-receipt.ts";
import type { ReceiptBounds } from "../src/edge/receipt-bounds.ts";

/** One UTC day of a key's receipts. */
export interface CarbonDay {
  date: string;
  gco2e: number;
  requests: number;
}

/** Days of receipts kept per key (a month's budget needs 31; the rest is history for GET /v1/usage/carbon). */
const KEPT_DAYS = 400;
const DAY_MS = 86_400_000;

const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * A key's carbon spend: one object per API key (`idFromName(keyId)`) summing its receipts
 * (interactive and batch) per UTC day, in storage so an evicted object keeps its totals, and its
 * recent settled receipts (GET /v1/usage/receipts/{request_id}). The edge records each answered
 * request's gCO2e and receipt here and, for a key with a budget, asks for its pace before routing.
 * Callers without a key (INFERENCE_ACCESS "open") share the ANONYMOUS object, which keeps
 * receipts only.
 *
 * Receipts live in a SQLite table in insertion order (`seq`, the rowid), each with its expiry:
 * the oldest are pruned past the count bound on insert, expired ones on insert and by an alarm,
 * so a key that stops calling does not keep them either.
 */
export class CarbonLedgerDO extends DurableObject<Env> {
  private days: Map<string, CarbonDay> | undefined;
  /** When the pending alarm fires; undefined until read from storage. */
  private alarmAt: number | null | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS receipt (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, expires_ms INTEGER NOT NULL, body TEXT NOT NULL)");
  }

  private async load(): Promise<Map<string, CarbonDay>> {
    if (!this.days) {
      this.days = new Map();
      for (const [, day] of await this.ctx.storage.list<CarbonDay>({ prefix: "day:" })) this.days.set(day.date, day);
    }
    return this.days;
  }

  /**
   * Adds one request's gCO2e to its day (pruning days older than KEPT_DAYS) and keeps its receipt
   * when given; both are written together (no await between the table insert and the put).
   */
  async record(gco2e: number, nowMs: number, kept?: { receipt: SettledReceipt; bounds: ReceiptBounds }): Promise<void> {
    if (!Number.isFinite(gco2e) || gco2e < 0) return;
    const days = await this.load();
    const expiresMs = kept ? this.insert(kept.receipt, kept.bounds, nowMs) : null;
    const date = dateOf(nowMs);
    const day = days.get(date) ?? { date, gco2e: 0, requests: 0 };
    day.gco2e += gco2e;
    day.requests += 1;
    days.set(date, day);
    await this.ctx.storage.put(`day:${date}`, day);
    if (expiresMs !== null) await this.expireBy(expiresMs);
    if (days.size > KEPT_DAYS) {
      const oldest = [...days.keys()].sort().slice(0, days.size - KEPT_DAYS);
      for (const d of oldest) days.delete(d);
      await this.ctx.storage.delete(oldest.map((d) => `day:${d}`));
    }
  }

  /** Keeps requests' receipts without booking their gCO2e (the ANONYMOUS object, in batches: ReceiptBatcher). */
  async keep(receipts: readonly SettledReceipt[], bounds: ReceiptBounds, nowMs: number): Promise<void> {
    let expiresMs = nowMs;
    for (const receipt of receipts) expiresMs = this.insert(receipt, bounds, nowMs);
    if (receipts.length > 0) await this.expireBy(expiresMs);
  }

  /** The receipt of request `id`, or null when this key has none (never had, or pruned). */
  receipt(id: string, nowMs: number): SettledReceipt | null {
    const row = this.ctx.storage.sql.exec<{ body: string }>("SELECT body FROM receipt WHERE id = ? AND expires_ms > ?", id, nowMs).toArray()[0];
    if (!row) return null;
    const parsed = SettledReceipt.safeParse(JSON.parse(row.body));
    return parsed.success ? parsed.data : null;
  }

  /** Prunes expired receipts and wakes again when the oldest left expires. */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    const nowMs = Date.now();
    this.pruneExpired(nowMs);
    const next = this.ctx.storage.sql.exec<{ expires_ms: number }>("SELECT expires_ms FROM receipt ORDER BY seq LIMIT 1").toArray()[0];
    if (next) await this.wakeAt(Math.max(next.expires_ms, nowMs + 1000));
  }

  /** Inserts a receipt and prunes past the bounds; returns when it expires. */
  private insert(receipt: SettledReceipt, bounds: ReceiptBounds, nowMs: number): number {
    const sql = this.ctx.storage.sql;
    const expiresMs = nowMs + bounds.maxAgeMs;
    // An id seen twice (it cannot be: ids are random) keeps its first receipt.
    const seq = sql.exec<{ seq: number }>("INSERT OR IGNORE INTO receipt (id, expires_ms, body) VALUES (?, ?, ?) RETURNING seq", receipt.id, expiresMs, JSON.stringify(receipt)).toArray()[0]?.seq;
    // seq only grows and only the oldest rows are deleted, so the newest maxCount rows are those above seq - maxCount.
    if (seq !== undefined) sql.exec("DELETE FROM receipt WHERE seq <= ?", seq - bounds.maxCount);
    this.pruneExpired(nowMs);
    return expiresMs;
  }

  /** An alarm by `expiresMs` unless one is pending (it re-arms for the oldest receipt left). */
  private async expireBy(expiresMs: number): Promise<void> {
    if (this.alarmAt === undefined) this.alarmAt = await this.ctx.storage.getAlarm();
    if (this.alarmAt === null) await this.wakeAt(expiresMs);
  }

  /**
   * Deletes the expired receipts at the front of the table. Rows are in settle order up to the
   * edge isolates' clock skew, so this reads only the expired rows and the first live one; a row
   * kept a little past its expiry by skew is never answered (reads check expires_ms).
   */
  private pruneExpired(nowMs: number): void {
    const sql = this.ctx.storage.sql;
    const live = sql.exec<{ seq: number }>("SELECT seq FROM receipt WHERE expires_ms > ? ORDER BY seq LIMIT 1", nowMs).toArray()[0];
    if (live) sql.exec("DELETE FROM receipt WHERE seq < ?", live.seq);
    else sql.exec("DELETE FROM receipt");
  }

  private async wakeAt(ms: number): Promise<void> {
    this.alarmAt = ms;
    await this.ctx.storage.setAlarm(ms);
  }

  /** The key's pace against `budget` now. */
  async pace(budget: CarbonBudget, nowMs: number): Promise<CarbonPace> {
    return carbonPace(budget, await this.spentIn(budget.period, nowMs), nowMs);
  }

  /** Spend in the current period of `period` (UTC days of it so far). */
  async spentIn(period: CarbonBudget["period"], nowMs: number): Promise<number> {
    const days = await this.load();
    const { startMs } = budgetPeriod(period, nowMs);
    let total = 0;
    for (let t = startMs; t <= nowMs; t += DAY_MS) total += days.get(dateOf(t))?.gco2e ?? 0;
    return total;
  }

  /** The last `count` days with receipts, newest first. */
  async recentDays(count: number): Promise<CarbonDay[]> {
    const days = await this.load();
    return [...days.values()].sort((a, b) => (a.date < b.date ? 1 : -1)).slice(0, count);
  }
}

export const carbonLedger = (env: Env, keyId: string) => env.CARBON_LEDGER.get(env.CARBON_LEDGER.idFromName(keyId));
