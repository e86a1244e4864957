import { z } from "zod";
import { ServiceTier } from "./flex.ts";

/**
 * The OpenAI request bodies the edge accepts: the fields clients send are checked, anything else
 * is passed to the site untouched (loose objects). Besides the body's byte limit, the lists that
 * multiply an engine's work or the edge's are bounded (OPENAI_LIMITS): each choice (`n`,
 * `best_of`) and each prompt of a batch is a generation of its own.
 */
export const OPENAI_LIMITS = {
  modelChars: 256,
  messages: 2048,
  contentParts: 1024,
  /** Choices per request (`n`, `best_of`): OpenAI allows 128; each is a whole generation. */
  choices: 16,
  /** Prompts of one /v1/completions batch. */
  prompts: 64,
  tools: 128,
  userChars: 256,
  nameChars: 256,
  maxTokens: 1 << 20,
} as const;

const nullableNumber = (schema: z.ZodNumber) => schema.nullish();

/** A content part: text and image parts are checked; other kinds (audio, files) pass through. */
const ContentPart = z.looseObject({ type: z.string().min(1), text: z.unknown().optional(), image_url: z.unknown().optional() }).superRefine((part, ctx) => {
  if (part.type === "text" && typeof part.text !== "string") ctx.addIssue({ code: "custom", message: "a text part needs a string 'text'", path: ["text"] });
  if (part.type === "image_url") {
    const url = part.image_url;
    const ok = typeof url === "string" || (typeof url === "object" && url !== null && typeof (url as { url?: unknown }).url === "string");
    if (!ok) ctx.addIssue({ code: "custom", message: "an image part needs 'image_url.url'", path: ["image_url"] });
  }
});

/**
 * Where content may be left out, as OpenAI's spec has it: an assistant message that carries
 * `tool_calls` or `function_call` may omit it or send null, a (deprecated) function message must
 * send it but may send null; every other message needs text or parts. An assistant message that
 * carries a `refusal` or `audio` is let pass too: it is how OpenAI's own answers come back in a
 * client's history, with null content.
 */
function contentRequirement(message: { role: string; content?: unknown; tool_calls?: unknown; function_call?: unknown; refusal?: unknown; audio?: unknown }): string | undefined {
  if (message.content !== undefined && message.content !== null) return undefined;
  if (message.role === "assistant") return [message.tool_calls, message.function_call, message.refusal, message.audio].some((x) => x != null) ? undefined : "an assistant message needs 'content' unless it carries 'tool_calls' or 'function_call'";
  if (message.role === "function") return message.content === null ? undefined : "a function message needs 'content' (a string or null)";
  return `a ${message.role} message needs 'content' (a string or a list of content parts)`;
}

const ChatMessage = z
  .looseObject({
    role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
    content: z.union([z.string(), z.array(ContentPart).max(OPENAI_LIMITS.contentParts), z.null()], { error: `expected a string or a list of at most ${OPENAI_LIMITS.contentParts} content parts` }).optional(),
    name: z.string().max(OPENAI_LIMITS.nameChars).optional(),
  })
  .superRefine((message, ctx) => {
    const missing = contentRequirement(message);
    if (missing) ctx.addIssue({ code: "custom", message: missing, path: ["content"] });
  });

// Each union names its field and rule: zod's own message, when no option takes a value, is only "Invalid input".
const Stop = z.union([z.string(), z.array(z.string()).max(4)], { error: "expected a string or a list of at most 4 strings" }).nullish();

/** A field only a site's gateway sets between its own engines: a request from a client may not carry it. */
const siteOnly = (field: string) => z.undefined({ error: `${field} is set by the site between its own engines; a request may not carry it` }).optional();

const common = {
  model: z.string().min(1).max(OPENAI_LIMITS.modelChars),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  temperature: nullableNumber(z.number().min(0).max(2)),
  top_p: nullableNumber(z.number().min(0).max(1)),
  n: nullableNumber(z.number().int().min(1).max(OPENAI_LIMITS.choices)),
  stop: Stop,
  max_tokens: nullableNumber(z.number().int().positive().max(OPENAI_LIMITS.maxTokens)),
  presence_penalty: nullableNumber(z.number().min(-2).max(2)),
  frequency_penalty: nullableNumber(z.number().min(-2).max(2)),
  seed: nullableNumber(z.number().int()),
  user: z.string().max(OPENAI_LIMITS.userChars).nullish(),
  /** "flex" lets the edge hold the request up to its deadline (src/worker/flex); "scale" and "priority" are refused. */
  service_tier: ServiceTier.nullish(),
  /** Set only by a site's gateway between its own engines (`KvTransferParams`); from a client it could make an engine fetch KV from any host. */
  kv_transfer_params: siteOnly("kv_transfer_params"),
  /** Set only by a site's gateway between its own SGLang engines (`KvBootstrap`), for the same reason. */
  bootstrap_host: siteOnly("bootstrap_host"),
  bootstrap_port: siteOnly("bootstrap_port"),
  bootstrap_room: siteOnly("bootstrap_room"),
};

/** OpenAI refuses `stream_options` on a request that does not stream (null counts as not sent). */
function streamOptionsNeedStream(body: { stream?: boolean | null | undefined; stream_options?: unknown }, ctx: z.RefinementCtx): void {
  if (body.stream_options != null && body.stream !== true) ctx.addIssue({ code: "custom", message: "The 'stream_options' parameter is only allowed when 'stream' is enabled.", path: ["stream_options"] });
}

/** `POST /v1/chat/completions`. */
export const ChatCompletionRequest = z.looseObject({
  ...common,
  messages: z.array(ChatMessage).min(1).max(OPENAI_LIMITS.messages),
  max_completion_tokens: nullableNumber(z.number().int().positive().max(OPENAI_LIMITS.maxTokens)),
  logprobs: z.boolean().nullish(),
  top_logprobs: nullableNumber(z.number().int().min(0).max(20)),
  tools: z.array(z.looseObject({ type: z.string() })).max(OPENAI_LIMITS.tools).nullish(),
  response_format: z.looseObject({ type: z.string() }).nullish(),
}).superRefine(streamOptionsNeedStream);
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

/** One prompt given as token ids. */
const TokenIds = z.array(z.number().int().nonnegative()).min(1);

/** `POST /v1/completions`: the prompt is text, a list of texts, token ids, or lists of token ids. */
export const CompletionRequest = z.looseObject({
  ...common,
  prompt: z.union([z.string(), z.array(z.string()).min(1).max(OPENAI_LIMITS.prompts), TokenIds, z.array(TokenIds).min(1).max(OPENAI_LIMITS.prompts)], {
    error: `expected a string, a list of 1 to ${OPENAI_LIMITS.prompts} strings, a list of token ids (integers >= 0), or a list of 1 to ${OPENAI_LIMITS.prompts} such lists`,
  }),
  suffix: z.string().nullish(),
  echo: z.boolean().nullish(),
  best_of: nullableNumber(z.number().int().min(1).max(OPENAI_LIMITS.choices)),
  logprobs: nullableNumber(z.number().int().min(0).max(5)),
}).superRefine(streamOptionsNeedStream);
export type CompletionRequest = z.infer<typeof CompletionRequest>;

/** OpenAI's default `max_tokens` for `/v1/completions` (vLLM uses the same); chat has no default. */
export const COMPLETIONS_DEFAULT_MAX_TOKENS = 16;
