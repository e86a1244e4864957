import { DurableObject } from "cloudflare:workers";
import type { BatchLine, BatchObject, BatchStatus, CreateBatchRequest } from "../src/core/schemas/batch.ts";
import { pendingByClass, pickLines } from "../src/core/deferral/batch-line-picks.ts";
import type { BatchAllotment } from "../src/core/deferral/deferral-book.ts";
import type { ClassId } from "../src/core/schemas/ids.ts";
import { unansweredLine } from "../src/edge/batch-output-line.ts";
import { markBatchEnded } from "../src/edge/active-batches.ts";
import { indexFile } from "../src/edge/file-index.ts";
import { ANONYMOUS, type Identity } from "../src/edge/identity.ts";
import { newFileId, putFile } from "../src/edge/stored-files.ts";
import type { BatchServing, LineOutcome, ServingRound } from "./batch-serving.ts";
import { deferralStub } from "./deferral-do.ts";

/** What the object stores besides its lines and answers. */
interface BatchState {
  object: BatchObject;
  owner: string;
  /** Failed attempts per line index (lines that failed at a site); a line gets MAX_LINE_ATTEMPTS. */
  attempts: Record<number, number>;
  /** Per line index, the sites that failed it: its next attempts go elsewhere while another site is up. */
  failedAt?: Record<number, string[]>;
  /** Set on entering finalizing, so a finalization that is retried writes the same files. */
  fileIds?: { output: string; error: string };
  /** What the deferral scheduler released to this batch for the slot that ends at `untilMs`, less what it ran. */
  released?: { untilMs: number; allotments: BatchAllotment[] };
}

type Answer = { ok: boolean; text: string };

/** Attempts a line gets at sites that fail it before it goes to the error file. */
export const MAX_LINE_ATTEMPTS = 5;
/** How long the alarm waits before looking again when nothing could be released. */
const IDLE_RETRY_MS = 2_000;
const WINDOW_MS = 24 * 3600 * 1000;
const TERMINAL: readonly BatchStatus[] = ["failed", "completed", "expired", "cancelled"];

const secondsOf = (ms: number) => Math.floor(ms / 1000);

/**
 * One batch of the Batch API (`idFromName(batchId)`): its request lines (copied from the input
 * file at creation), each line's answer once it has one, and the OpenAI batch object. Its alarm
 * dispatches: at each slot the batch takes its turn at the deferral scheduler (DeferralDO: which
 * of its lines run now, at which site), then rounds run those lines through the edge's own serving
 * path (`serving`, which the Worker supplies: see BatchServing), store each answer under the line's
 * index, and set the next alarm. Everything is in storage, so a restarted Worker or evicted object
 * resumes where it was; a line whose site died (before or after its first byte) has no answer yet
 * and runs again at the next round elsewhere; answers are keyed by line, so none appears twice in
 * the output.
 */
export abstract class BatchDurableObject extends DurableObject<Env> {
  protected abstract readonly serving: BatchServing;
  /** Per answered line index, whether it went to the output file (loaded from storage once per object). */
  private answered: Map<number, boolean> | undefined;
  /** Each pending line's class under the routing scheme named (computed once per object and scheme). */
  private classes: { scheme: string; of: Map<number, ClassId | null> } | undefined;

  /** Stores the batch and its lines and starts dispatching; returns the batch object ("validating"). */
  async create(id: string, owner: string, request: CreateBatchRequest, lines: BatchLine[], nowMs: number): Promise<BatchObject> {
    const existing = await this.state();
    if (existing) return existing.object;
    // Written without an await between them, the lines commit together or not at all: a batch
    // that could not be stored leaves nothing behind (no alarm would ever clean it up).
    const writes: Promise<void>[] = [];
    for (let i = 0; i < lines.length; i += 128) {
      const chunk: Record<string, BatchLine> = {};
      lines.slice(i, i + 128).forEach((line, k) => (chunk[`line:${i + k}`] = line));
      writes.push(this.ctx.storage.put(chunk));
    }
    await Promise.all(writes);
    const object: BatchObject = {
      id,
      object: "batch",
      endpoint: request.endpoint,
      errors: null,
      input_file_id: request.input_file_id,
      completion_window: "24h",
      status: "validating",
      output_file_id: null,
      error_file_id: null,
      created_at: secondsOf(nowMs),
      in_progress_at: null,
      expires_at: secondsOf(nowMs + WINDOW_MS),
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      request_counts: { total: lines.length, completed: 0, failed: 0 },
      metadata: request.metadata ?? null,
    };
    await this.save({ object, owner, attempts: {} });
    await this.ctx.storage.setAlarm(nowMs);
    return object;
  }

  /** The batch object, to its owner only (null for anyone else and for an id with no batch). */
  async get(owner: string): Promise<BatchObject | null> {
    const state = await this.state();
    return state && state.owner === owner ? state.object : null;
  }

  /** Cancels a batch that has not ended: "cancelling" now, "cancelled" once the alarm wrote what was answered. */
  async cancel(owner: string, nowMs: number): Promise<BatchObject | null> {
    const state = await this.state();
    if (!state || state.owner !== owner) return null;
    if (TERMINAL.includes(state.object.status) || state.object.status === "cancelling" || state.object.status === "finalizing") return state.object;
    state.object.status = "cancelling";
    state.object.cancelling_at = secondsOf(nowMs);
    await this.save(state);
    await this.ctx.storage.setAlarm(nowMs);
    return state.object;
  }

  override async alarm(): Promise<void> {
    const state = await this.state();
    if (!state || TERMINAL.includes(state.object.status)) return;
    const nowMs = Date.now();
    const b = state.object;
    if (b.status === "validating") {
      b.status = "in_progress";
      b.in_progress_at = secondsOf(nowMs);
      await this.save(state);
    }
    if (b.status === "cancelling") return this.finalize(state, "cancelled", nowMs);
    if (b.status === "finalizing") return this.finalize(state, "completed", nowMs);
    const answered = await this.answeredLines();
    const pending = Array.from({ length: b.request_counts.total }, (_, i) => i).filter((i) => !answered.has(i));
    if (nowMs >= b.expires_at * 1000) return this.finalize(state, "expired", nowMs);
    if (pending.length === 0) return this.finalize(state, "completed", nowMs);

    const round = await this.serving.round(this.env);
    const caller = this.callerOf(state, round.apiKeys);
    let nextMs = nowMs + IDLE_RETRY_MS;
    if (!caller) {
      // The key that made the batch was revoked: its remaining lines cannot run.
      for (const i of pending) {
        const line = await this.ctx.storage.get<BatchLine>(`line:${i}`);
        if (line) await this.store(i, { ok: false, text: unansweredLine(line, "api_key_revoked", "The API key that created this batch was revoked.") });
      }
      nextMs = Date.now();
    } else if (round.routing) {
      nextMs = await this.runRound(state, pending, caller, round, nowMs);
    }
    // A cancel that arrived while lines ran is kept (the stored state is the newest). A run of the
    // alarm beside this one (the runtime's own retry, a test's) may have ended the batch meanwhile:
    // its files are written, so what this round answered is dropped, not counted over them.
    const latest = await this.state();
    if (!latest || TERMINAL.includes(latest.object.status)) return this.forgetLines();
    state.object.request_counts = this.counts(answered, b.request_counts.total);
    latest.object.request_counts = state.object.request_counts;
    latest.attempts = state.attempts;
    latest.failedAt = state.failedAt;
    if (state.released) latest.released = state.released;
    await this.save(latest);
    await this.ctx.storage.setAlarm(Math.min(nextMs, latest.object.expires_at * 1000));
  }

  /**
   * One round of lines: at a new slot, the batch's turn at the deferral scheduler (its pending lines
   * by class in, what the slot releases to it out); then up to MAX_LINES_PER_ROUND of the released
   * lines run through the edge's serving path, each at its allotment's site. Returns when the next
   * round is due: at once after progress while the slot has more, 2 s after a round that found no
   * room, else at the next slot (or the period's end for a key over its carbon budget).
   */
  private async runRound(state: BatchState, pending: number[], caller: Identity, round: ServingRound, nowMs: number): Promise<number> {
    const b = state.object;
    const classOf = await this.lineClasses(pending, round, state.owner);
    if (!state.released || nowMs >= state.released.untilMs) {
      const turn = await deferralStub(this.env).batchTurn({ batchId: b.id, submittedAtMs: b.created_at * 1000, deadlineMs: b.expires_at * 1000, pending: pendingByClass(pending, classOf) });
      // Unplanned, lines run as they come: the allotment holds for one idle wait, not a slot.
      state.released = { untilMs: turn.unplanned === null ? turn.nextSlotMs : nowMs + IDLE_RETRY_MS, allotments: turn.allotments };
    }
    const picks = pickLines(pending, classOf, state.released.allotments);
    if (picks.length === 0) return state.released.untilMs;
    const stored = await this.ctx.storage.get<BatchLine>(picks.map((p) => `line:${p.index}`));
    // A line is gone only when a run beside this one ended the batch; there is nothing to run.
    const present = picks.flatMap((p) => {
      const line = stored.get(`line:${p.index}`);
      return line ? [{ ...p, line }] : [];
    });
    const sites = Object.keys(round.routing?.sites ?? {});
    const avoid = (i: number) => {
      const failed = new Set(state.failedAt?.[i] ?? []);
      return sites.every((s) => failed.has(s)) ? new Set<string>() : failed;
    };
    const outcomes = await Promise.all(present.map((p) => round.serve(p.line, caller, { sites: p.site === null ? null : new Set([p.site]), avoid: avoid(p.index), spareOnly: p.spareOnly })));
    let progressed = false;
    let nextMs = Math.min(nowMs + IDLE_RETRY_MS, state.released.untilMs);
    for (const [k, outcome] of outcomes.entries()) {
      const { index: i, line } = present[k]!;
      const answer = this.settleLine(state, i, line, outcome);
      if (answer) {
        await this.store(i, answer);
        progressed = true;
      }
      if (outcome.kind === "budget") nextMs = Math.max(nextMs, nowMs + outcome.retryAfterS * 1000);
    }
    if (progressed && !outcomes.some((o) => o.kind === "budget")) nextMs = Date.now();
    await this.serving.flush(this.env).catch(() => undefined);
    return nextMs;
  }

  /** The class of each pending line as the edge classifies it, computed once per line and routing scheme. */
  private async lineClasses(pending: readonly number[], round: ServingRound, owner: string): Promise<(i: number) => ClassId | null> {
    const scheme = round.routing!.scheme;
    if (this.classes?.scheme !== scheme.name) this.classes = { scheme: scheme.name, of: new Map() };
    const known = this.classes.of;
    const missing = pending.filter((i) => !known.has(i));
    for (let k = 0; k < missing.length; k += 128) {
      const chunk = missing.slice(k, k + 128);
      const lines = await this.ctx.storage.get<BatchLine>(chunk.map((i) => `line:${i}`));
      for (const i of chunk) {
        const line = lines.get(`line:${i}`);
        if (line) known.set(i, round.classify(line, owner));
      }
    }
    return (i) => known.get(i) ?? null;
  }

  /** The answer a line's outcome gives it, if any: its own, or an error once it failed MAX_LINE_ATTEMPTS times. */
  private settleLine(state: BatchState, i: number, line: BatchLine, outcome: LineOutcome): Answer | null {
    if (outcome.kind === "done") return { ok: outcome.ok, text: outcome.text };
    if (outcome.kind !== "retry" || !outcome.countsAsAttempt) return null;
    if (outcome.failedSite) {
      state.failedAt ??= {};
      state.failedAt[i] = [...new Set([...(state.failedAt[i] ?? []), outcome.failedSite])];
    }
    const attempts = (state.attempts[i] ?? 0) + 1;
    state.attempts[i] = attempts;
    if (attempts < MAX_LINE_ATTEMPTS) return null;
    return { ok: false, text: unansweredLine(line, "line_failed", `The line failed at ${attempts} attempts; the last: ${outcome.why}.`) };
  }

  /** Writes the output and error files (lines in input order) and ends the batch in `status`. */
  private async finalize(state: BatchState, status: "completed" | "cancelled" | "expired", nowMs: number): Promise<void> {
    const b = state.object;
    if (status === "completed" && b.status !== "finalizing") {
      b.status = "finalizing";
      b.finalizing_at = secondsOf(nowMs);
    }
    state.fileIds ??= { output: newFileId(), error: newFileId() };
    await this.save(state);
    const answers = await this.answers();
    if (status === "expired") {
      for (let i = 0; i < b.request_counts.total; i++) {
        if (answers.has(i)) continue;
        const line = (await this.ctx.storage.get<BatchLine>(`line:${i}`))!;
        answers.set(i, { ok: false, text: unansweredLine(line, "batch_expired", "This line was not run before the batch's completion window ended.") });
      }
    }
    const ordered = [...answers.entries()].sort(([a], [c]) => a - c).map(([, a]) => a);
    const write = async (id: string, texts: string[], kind: string) => {
      if (texts.length === 0) return null;
      const stored = await putFile(this.env.FILES, id, `${texts.join("\n")}\n`, { owner: state.owner, purpose: "batch_output", filename: `${b.id}_${kind}.jsonl`, createdAt: secondsOf(nowMs), endpoint: "", lines: texts.length });
      // Output files count against the key's file quota too (they are written whatever its use).
      await indexFile(this.env.FILES, state.owner, id, stored.size);
      return id;
    };
    b.output_file_id = await write(state.fileIds.output, ordered.filter((a) => a.ok).map((a) => a.text), "output");
    b.error_file_id = await write(state.fileIds.error, ordered.filter((a) => !a.ok).map((a) => a.text), "error");
    b.request_counts = { total: b.request_counts.total, completed: ordered.filter((a) => a.ok).length, failed: ordered.filter((a) => !a.ok).length };
    b.status = status;
    b[`${status}_at`] = secondsOf(nowMs);
    await this.save(state);
    // The files hold the answers now: the lines and answers go, and the batch no longer counts against its key.
    await this.forgetLines();
    await markBatchEnded(this.env.FILES, state.owner, b.id);
    await deferralStub(this.env).batchDone(b.id).catch((error: unknown) => console.error(`batch ${b.id}: the deferral scheduler was not told it ended`, error));
  }

  /** The identity the batch's lines run as; null when its key no longer exists. */
  private callerOf(state: BatchState, keys: Record<string, { carbonBudget: Identity["carbonBudget"] }>): Identity | null {
    const none = { requestsPerMinute: null, tokensPerMinute: null };
    if (state.owner === ANONYMOUS) return { keyId: null, limits: none, carbonBudget: null };
    const key = Object.hasOwn(keys, state.owner) ? keys[state.owner] : undefined;
    return key ? { keyId: state.owner, limits: none, carbonBudget: key.carbonBudget ?? null } : null;
  }

  /** Deletes the stored lines and answers, a batch of keys at a time (storage deletes take at most 128 keys). */
  private async forgetLines(): Promise<void> {
    for (const prefix of ["line:", "answer:"]) {
      for (;;) {
        const keys = [...(await this.ctx.storage.list({ prefix, limit: 128 })).keys()];
        if (keys.length === 0) break;
        await this.ctx.storage.delete(keys);
      }
    }
    this.answered = undefined;
    this.classes = undefined;
  }

  /** Every stored answer (read whole only to write the files). */
  private async answers(): Promise<Map<number, Answer>> {
    const stored = await this.ctx.storage.list<Answer>({ prefix: "answer:" });
    return new Map([...stored].map(([k, v]) => [Number(k.slice("answer:".length)), v]));
  }

  private async answeredLines(): Promise<Map<number, boolean>> {
    this.answered ??= new Map([...(await this.answers())].map(([i, a]) => [i, a.ok]));
    return this.answered;
  }

  private async store(i: number, answer: Answer): Promise<void> {
    await this.ctx.storage.put(`answer:${i}`, answer);
    (await this.answeredLines()).set(i, answer.ok);
  }

  private counts(answered: Map<number, boolean>, total: number): BatchObject["request_counts"] {
    let completed = 0;
    for (const ok of answered.values()) if (ok) completed++;
    return { total, completed, failed: answered.size - completed };
  }

  private state(): Promise<BatchState | undefined> {
    return this.ctx.storage.get<BatchState>("batch");
  }

  private save(state: BatchState): Promise<void> {
    return this.ctx.storage.put("batch", state);
  }
}

export const batchStub = (env: Env, id: string) => env.BATCH.get(env.BATCH.idFromName(id));
