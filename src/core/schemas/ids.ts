import { z } from "zod";

/**
 * Ids become object and map keys all over the system, so none may be a name every object already
 * answers to (`constructor`, `toString`, `__proto__`...): such a key reads the prototype's member.
 */
const notObjectMember = (id: string) => !(id in Object.prototype);
const NOT_OBJECT_MEMBER = { message: "must not be the name of a built-in object member (constructor, toString, __proto__...)" };

/** Identifiers are branded so a site id cannot be passed where a model id is meant. */
export const SiteId = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lower-case letters, digits and '-'").refine(notObjectMember, NOT_OBJECT_MEMBER).brand<"SiteId">();
export type SiteId = z.infer<typeof SiteId>;

export const ModelId = z.string().min(1).max(128).refine(notObjectMember, NOT_OBJECT_MEMBER).brand<"ModelId">();
export type ModelId = z.infer<typeof ModelId>;

/** A model variant (quantisation, distillation...) within a model, e.g. "fp8". */
export const VariantId = z.string().regex(/^[A-Za-z0-9._-]{1,64}$/).refine(notObjectMember, NOT_OBJECT_MEMBER).brand<"VariantId">();
export type VariantId = z.infer<typeof VariantId>;

export const InstanceId = z.string().min(1).max(128).refine(notObjectMember, NOT_OBJECT_MEMBER).brand<"InstanceId">();
export type InstanceId = z.infer<typeof InstanceId>;

/** Request class name, e.g. "SS".."LL" for the default 3x3 scheme (input bin, then output bin). */
export const ClassId = z.string().regex(/^[A-Za-z0-9_-]{1,16}$/).refine(notObjectMember, NOT_OBJECT_MEMBER).brand<"ClassId">();
export type ClassId = z.infer<typeof ClassId>;

/** GPU types the performance model knows. */
export const GpuType = z.enum(["A100-80GB", "H100-80GB"]);
export type GpuType = z.infer<typeof GpuType>;

/** Milliseconds since the Unix epoch. */
export const EpochMs = z.number().int().nonnegative();
export type EpochMs = z.infer<typeof EpochMs>;
