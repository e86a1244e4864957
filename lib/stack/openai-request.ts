/**
 * Requests shaped as the official OpenAI clients send them (headers and body), for the load
 * generator and the end-to-end tests: the edge must take exactly what real clients send.
 */

/** A prompt the edge's estimator counts as about `tokens` tokens: short words, one token each. */
export function promptOfTokens(tokens: number): string {
  const words = ["the", "sun", "and", "sea", "are", "low", "in", "May", "so", "we", "run", "on", "air"];
  const out: string[] = [];
  for (let i = 0; i < Math.max(1, tokens); i++) out.push(words[i % words.length]!);
  return out.join(" ");
}

export interface ChatRequestShape {
  model: string;
  inputTokens: number;
  maxTokens: number;
  stream: boolean;
  apiKey?: string;
}

/** Method, headers and JSON body of `client.chat.completions.create(...)` from the openai npm package. */
export function chatCompletionRequest(r: ChatRequestShape): { method: "POST"; headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json",
    "user-agent": "OpenAI/JS 4.104.0",
    "x-stainless-lang": "js",
    "x-stainless-package-version": "4.104.0",
    "x-stainless-runtime": "node",
    "x-stainless-retry-count": "0",
  };
  if (r.apiKey) headers.authorization = `Bearer ${r.apiKey}`;
  const body = {
    model: r.model,
    messages: [
      { role: "system", content: "You are a helpful assistant." },
      { role: "user", content: promptOfTokens(r.inputTokens) },
    ],
    max_tokens: r.maxTokens,
    ...(r.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
  return { method: "POST", headers, body: JSON.stringify(body) };
}
