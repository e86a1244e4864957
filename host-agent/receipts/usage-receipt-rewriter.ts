import type { MeteredEnergy } from "./energy-meter.ts";

/** Rewrites a response body on its way through the gateway, chunk by chunk; may hold chunks while it waits. */
export interface BodyRewriter {
  chunk(chunk: Buffer): Buffer[] | Promise<Buffer[]>;
  end(): Buffer[] | Promise<Buffer[]>;
}

/** The part of an OpenAI `usage` object the receipt reads and extends. */
export interface UsageObject {
  completion_tokens?: unknown;
  greenference?: { energy_j?: unknown; [k: string]: unknown };
  [k: string]: unknown;
}

/** A JSON answer larger than this passes through unread (and without a receipt). */
const JSON_LIMIT = 1 << 20;

/**
 * Puts the site's energy receipt into an engine's answer as `usage.greenference.energy_j` and
 * `energy_source`, where the edge reads receipts: in an SSE stream, the event that carries `usage`
 * is held until `receipt` answers (the events before it pass at once); a JSON answer (up to 1 MiB)
 * is held whole and its `usage` extended. A usage that already has `greenference.energy_j` (an
 * engine that gives its own receipt) is left alone. `receipt` is called exactly once, at the usage
 * or at the end, so the meter always learns that the request is over. `prefillJ`, the energy of the
 * request's prefill on another engine (a prefill/decode handoff; a promise where the prefill may
 * answer while its decode partner runs, as SGLang's), is added to the receipt's energy
 * and shown apart as `prefill_energy_j`.
 *
 * @example
 * const rewriter = usageReceiptRewriter("text/event-stream", (usage) => metered.finish(Number(usage?.completion_tokens)));
 */
export function usageReceiptRewriter(contentType: string | undefined, receipt: (usage: UsageObject | undefined) => Promise<MeteredEnergy | undefined>, prefillJ: number | Promise<number> = 0): BodyRewriter {
  let asked = false;
  const ask = (usage: UsageObject | undefined) => {
    asked = true;
    return receipt(usage);
  };
  const withReceipt = async (usage: UsageObject) => {
    const got = await ask(usage);
    if (got && usage.greenference?.energy_j === undefined) usage.greenference = { ...usage.greenference, energy_j: round3(got.energyJ), energy_source: got.source };
    const own = usage.greenference?.energy_j;
    const prefill = await prefillJ;
    if (prefill > 0 && typeof own === "number") usage.greenference = { ...usage.greenference, energy_j: round3(own + prefill), prefill_energy_j: round3(prefill) };
  };
  if ((contentType ?? "").toLowerCase().startsWith("text/event-stream")) return sseRewriter(withReceipt, ask, () => asked);
  return jsonRewriter(withReceipt, ask, () => asked);
}

function sseRewriter(withReceipt: (usage: UsageObject) => Promise<void>, ask: (usage: undefined) => unknown, asked: () => boolean): BodyRewriter {
  const decoder = new TextDecoder();
  let pending = "";
  const events = async (text: string, final: boolean): Promise<Buffer[]> => {
    pending += text;
    const out: string[] = [];
    let cut: RegExpExecArray | null;
    while ((cut = /\r?\n\r?\n/.exec(pending))) {
      const event = pending.slice(0, cut.index);
      const separator = cut[0];
      pending = pending.slice(cut.index + separator.length);
      out.push(`${await rewriteEvent(event, withReceipt)}${separator}`);
    }
    if (final && pending !== "") {
      out.push(await rewriteEvent(pending, withReceipt));
      pending = "";
    }
    return out.length === 0 ? [] : [Buffer.from(out.join(""))];
  };
  return {
    chunk: (chunk) => events(decoder.decode(chunk, { stream: true }), false),
    end: async () => {
      const out = await events(decoder.decode(), true);
      if (!asked()) await ask(undefined);
      return out;
    },
  };
}

/** One SSE event: the `data:` event whose JSON has a `usage` object gets the receipt; others pass unchanged. */
async function rewriteEvent(event: string, withReceipt: (usage: UsageObject) => Promise<void>): Promise<string> {
  if (!/"usage"\s*:\s*\{/.test(event)) return event;
  const lines = event.split(/\r?\n/);
  const dataLines = lines.filter((l) => l.startsWith("data:"));
  const body = parseObject(dataLines.map((l) => l.slice(5).trimStart()).join("\n"));
  const usage = body?.usage;
  if (!body || typeof usage !== "object" || usage === null) return event;
  await withReceipt(usage as UsageObject);
  return [...lines.filter((l) => !l.startsWith("data:")), `data: ${JSON.stringify(body)}`].join("\n");
}

function jsonRewriter(withReceipt: (usage: UsageObject) => Promise<void>, ask: (usage: undefined) => unknown, asked: () => boolean): BodyRewriter {
  const parts: Buffer[] = [];
  let bytes = 0;
  let passing = false;
  return {
    chunk: (chunk) => {
      if (passing) return [chunk];
      parts.push(chunk);
      bytes += chunk.length;
      if (bytes <= JSON_LIMIT) return [];
      passing = true;
      return parts.splice(0);
    },
    end: async () => {
      if (passing) {
        if (!asked()) await ask(undefined);
        return [];
      }
      const text = Buffer.concat(parts).toString("utf8");
      const body = parseObject(text);
      const usage = body?.usage;
      if (!body || typeof usage !== "object" || usage === null) {
        await ask(undefined);
        return [Buffer.from(text)];
      }
      await withReceipt(usage as UsageObject);
      return [Buffer.from(JSON.stringify(body))];
    },
  };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const round3 = (x: number) => Math.round(x * 1e3) / 1e3;
