import { DurableObject } from "cloudflare:workers";
import type { BatchLine, BatchObject, BatchStatus, CreateBatchRequest } from "../src/core/schemas/batch.ts";
import { releaseBatchWork } from "../src/core/deferral/batch-release.ts";
import { unansweredLine } from "../src/edge/batch-output-line.ts";
import { heartbeatTimeoutMs } from "../src/edge/env.ts";
import { ANONYMOUS, type Identity } from "../src/edge/identity.ts";
import { newFileId, putFile } from "../src/edge/stored-files.ts";
import type { BatchServing, LineOutcome } from "./batch-serving.ts";

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
 * dispatches: each round asks `releaseBatchWork` how many lines to run where, runs them through
 * the edge's own serving path (`serving`, which the Worker supplies: see BatchServing), stores
 * each answer under the line's index, and sets the next alarm. Everything is in storage, so a
 * restarted Worker or evicted object resumes where it was; a line whose site died (before or after
 * its first byte) has no answer yet and runs again at the next round elsewhere; answers are keyed
 * by line, so none appears twice in the output.
 */
export abstract class BatchDurableObject extends DurableObject<Env> {
  protected abstract readonly serving: BatchServing;
  /** Per answered line index, whether it went to the output file (loaded from storage once per object). */
  private answered: Map<number, boolean> | undefined;

  /** Stores the batch and its lines and starts dispatching; returns the batch object ("validating"). */
  async create(id: string, owner: string, request: CreateBatchRequest, lines: BatchLine[], nowMs: number): Promise<BatchObject> {
    const existing = await this.state();
    if (existing) return existing.object;
    for (let i = 0; i < lines.length; i += 128) {
      const chunk: Record<string, BatchLine> = {};
      lines.slice(i, i + 128).forEach((line, k) => (chunk[`line:${i + k}`] = line));
      await this.ctx.storage.put(chunk);
    }
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
    const release = releaseBatchWork({ batchId: b.id, pendingLines: pending.length, deadlineMs: b.expires_at * 1000 }, round.routing, nowMs, 2 * heartbeatTimeoutMs(this.env));
    const caller = this.callerOf(state, round.apiKeys);
    let nextMs = nowMs + IDLE_RETRY_MS;
    if (caller && release.lines > 0) {
      const taken = pending.slice(0, release.lines);
      const lines = await this.ctx.storage.get<BatchLine>(taken.map((i) => `line:${i}`));
      const sites = Object.keys(round.routing?.sites ?? {});
      const avoid = (i: number) => {
        const failed = new Set(state.failedAt?.[i] ?? []);
        return sites.every((s) => failed.has(s)) ? new Set<string>() : failed;
      };
      const outcomes = await Promise.all(taken.map((i) => round.serve(lines.get(`line:${i}`)!, caller, { sites: release.sites, avoid: avoid(i) })));
      let progressed = false;
      for (const [k, outcome] of outcomes.entries()) {
        const i = taken[k]!;
        const answer = this.settleLine(state, i, lines.get(`line:${i}`)!, outcome);
        if (answer) {
          await this.store(i, answer);
          progressed = true;
        }
        if (outcome.kind === "budget") nextMs = Math.max(nextMs, nowMs + outcome.retryAfterS * 1000);
      }
      if (progressed && !outcomes.some((o) => o.kind === "budget")) nextMs = Date.now();
      await this.serving.flush(this.env).catch(() => undefined);
    } else if (!caller) {
      // The key that made the batch was revoked: its remaining lines cannot run.
      for (const i of pending) await this.store(i, { ok: false, text: unansweredLine((await this.ctx.storage.get<BatchLine>(`line:${i}`))!, "api_key_revoked", "The API key that created this batch was revoked.") });
      nextMs = Date.now();
    }
    state.object.request_counts = this.counts(answered, b.request_counts.total);
    // A cancel that arrived while lines ran is kept (the stored state is the newest).
    const latest = (await this.state())!;
    latest.object.request_counts = state.object.request_counts;
    latest.attempts = state.attempts;
    latest.failedAt = state.failedAt;
    await this.save(latest);
    await this.ctx.storage.setAlarm(Math.min(nextMs, latest.object.expires_at * 1000));
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
      await putFile(this.env.FILES, id, `${texts.join("\n")}\n`, { owner: state.owner, purpose: "batch_output", filename: `${b.id}_${kind}.jsonl`, createdAt: secondsOf(nowMs), endpoint: "", lines: texts.length });
      return id;
    };
    b.output_file_id = await write(state.fileIds.output, ordered.filter((a) => a.ok).map((a) => a.text), "output");
    b.error_file_id = await write(state.fileIds.error, ordered.filter((a) => !a.ok).map((a) => a.text), "error");
    b.request_counts = { total: b.request_counts.total, completed: ordered.filter((a) => a.ok).length, failed: ordered.filter((a) => !a.ok).length };
    b.status = status;
    b[`${status}_at`] = secondsOf(nowMs);
    await this.save(state);
  }

  /** The identity the batch's lines run as; null when its key no longer exists. */
  private callerOf(state: BatchState, keys: Record<string, { carbonBudget: Identity["carbonBudget"] }>): Identity | null {
    const none = { requestsPerMinute: null, tokensPerMinute: null };
    if (state.owner === ANONYMOUS) return { keyId: null, limits: none, carbonBudget: null };
    const key = Object.hasOwn(keys, state.owner) ? keys[state.owner] : undefined;
    return key ? { keyId: state.owner, limits: none, carbonBudget: key.carbonBudget ?? null } : null;
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
