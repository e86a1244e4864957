/**
 * The request body as the replica's engine expects it: `model` renamed from the fleet's API id to
 * the name the engine serves (`--served-model-name`) where the two differ; unchanged otherwise.
 *
 * @example
 * withServedName(Buffer.from('{"model":"llama-8b"}'), "llama-8b", "meta-llama/Llama-3.1-8B-Instruct"); // '{"model":"meta-llama/Llama-3.1-8B-Instruct"}'
 */
export function withServedName(body: Buffer, asked: string, served: string): Buffer {
  if (asked === served) return body;
  const value = JSON.parse(body.toString("utf8")) as Record<string, unknown>;
  return Buffer.from(JSON.stringify({ ...value, model: served }));
}
