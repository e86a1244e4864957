import { z } from "zod";

/**
 * What a site's agent needs to run a fleet model: the name its engine serves it under, what the
 * engine loads, and its performance-model key (absent: the model runs on its measured profile).
 * The edge sends one per model in each plan slice (`SitePlanSlice.models`).
 */
export const ModelIdentity = z.object({
  servedName: z.string().min(1).max(256),
  weights: z.string().min(1).max(1024),
  perfModel: z.string().min(1).max(128).optional(),
});
export type ModelIdentity = z.infer<typeof ModelIdentity>;
