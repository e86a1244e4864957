import type { SeedName, SeedReproduction } from "./experiment.ts";
import { cloverReproduction } from "./clover.ts";
import { dynamollmReproduction } from "./dynamollm.ts";
import { freeshReproduction } from "./freesh.ts";
import { greenserveReproduction } from "./greenserve.ts";
import { heronReproduction } from "./heron.ts";

/** Every seed's reproduction (the compiler asks for each seed); `reproduce all` runs them in SEEDS order. */
export const REPRODUCTIONS: Record<SeedName, SeedReproduction> = {
  heron: heronReproduction,
  dynamollm: dynamollmReproduction,
  freesh: freeshReproduction,
  greenserve: greenserveReproduction,
  clover: cloverReproduction,
};
