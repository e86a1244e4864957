import type { z } from "zod";

/**
 * The issue an error reports first: an unknown key where there is one (a misspelt key, e.g.
 * `weigths`, also leaves the field it meant missing, and the unknown key says why), else the
 * first issue.
 */
export function leadingIssue(error: z.ZodError): z.core.$ZodIssue | undefined {
  return error.issues.find((i) => i.code === "unrecognized_keys") ?? error.issues[0];
}

/**
 * The path of the field a zod issue is about, for an error's `param`. An unknown key (a strict
 * object's `unrecognized_keys`) is reported at the object that holds it, so its path is the
 * object's (empty at the top level): the first unknown key is appended to name it.
 */
export function issueParam(issue: z.core.$ZodIssue): PropertyKey[] {
  return issue.code === "unrecognized_keys" && issue.keys.length > 0 ? [...issue.path, issue.keys[0]!] : [...issue.path];
}

/**
 * A field path as an error's `param` names it, in the OpenAI API's own form: keys joined by dots,
 * array indexes in brackets (`messages[0].content`, `sites[1].gpus`). Every error the edge answers
 * (a parsed body, a Durable Object's outcome, a heartbeat) names fields this one way.
 */
export function paramText(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i > 0 ? "." : ""}${String(p)}`)).join("");
}

/** The `param` of a zod error: its leading issue's field (an unknown key first), or null for the body as a whole. */
export function errorParam(error: z.ZodError): string | null {
  const issue = leadingIssue(error);
  return (issue && paramText(issueParam(issue))) || null;
}

/**
 * A zod error in one line, as every API of the system answers a body that fails its schema (with
 * code `invalid_value`): the leading issue's message and field, plus a count of the rest, and that
 * field as the error's `param`.
 *
 * @example
 * invalidSummary("heartbeat", error); // { message: "invalid heartbeat: Invalid input: expected number, received string at gpus[0].powerW (and 1 more)", param: "gpus[0].powerW" }
 */
export function invalidSummary(what: string, error: z.ZodError): { message: string; param: string | null } {
  const param = errorParam(error);
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : "";
  return { message: `invalid ${what}: ${leadingIssue(error)?.message ?? "bad input"}${param ? ` at ${param}` : ""}${more}`, param };
}
