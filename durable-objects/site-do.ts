import { DurableObject } from "cloudflare:workers";
export class SiteDO extends DurableObject<Env> {}
