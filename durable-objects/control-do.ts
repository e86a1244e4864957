import { DurableObject } from "cloudflare:workers";
export class ControlDO extends DurableObject<Env> {}
