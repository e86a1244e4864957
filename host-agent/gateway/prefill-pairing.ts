import { randomInt } from "node:crypto";
import type { KvBootstrap } from "../../src/core/schemas/kv-transfer.ts";
import { launchKey, servedNameOf, type Engine } from "../engines/engine.ts";
import type { EnergyMeter } from "../receipts/energy-meter.ts";
import { prefillAlongside, prefillForRemoteDecode } from "./prefill-handoff.ts";
import { prefillReplicas, type SiteView } from "./replica-directory.ts";
import { withServedName } from "./served-name.ts";

/** Bootstrap rooms are drawn below this: many more than requests in flight, and exact as a JSON number. */
const ROOMS = 2 ** 48 - 1;

/**
 * How a request for a decode replica is prefilled. `said` names the prefill replica, or says why
 * none prefilled (the decode replica then serves the request whole). With a partner, `fields` go
 * into the decode engine's body (vLLM's `kv_transfer_params` from the prefill's answer, or
 * SGLang's bootstrap fields) and `energyJ` settles with what the prefill cost, J (undefined when
 * unknown). An SGLang pair runs at once: `failed` aborts when the prefill half fails, and the
 * caller calls `cancel` when the decode half ends before the prefill answered.
 */
export interface Prefilled {
  said: string;
  fields?: Record<string, unknown>;
  energyJ: Promise<number | undefined>;
  failed?: AbortSignal;
  cancel(): void;
}

/** An SGLang decode replica with no prefill partner free: it cannot serve the request at all. */
export interface Unpaired {
  refused: string;
}

/** The gateway's count of requests in flight per replica (the engine, whatever its label), which prefills take slots of too. */
export interface ReplicaSlots {
  busy(e: Engine): number;
  hold(e: Engine): void;
  release(e: Engine): void;
}

export interface PrefillPairingOptions {
  view: SiteView;
  slots: ReplicaSlots;
  /** Requests one replica takes at once (`gatewayReplicaConcurrency`). */
  replicaConcurrency: number;
  /** Measures a prefill on an engine that gives no receipt of its own. */
  meter?: EnergyMeter;
  /** Longest a prefill engine may take to answer, ms. */
  timeoutMs: number;
  log?: (message: string) => void;
}

/** The request being paired: its model, route, body (the client's) and estimated prompt tokens. */
export interface PairingRequest {
  model: string;
  path: string;
  body: Buffer;
  inputTokens: number;
}

const NOTHING = Promise.resolve(undefined);

/**
 * Pairs requests the plan sends to a decode replica with a prefill replica of the same model at
 * the site, the least busy one with a free slot, in the protocol the decode engine speaks:
 * - `kv-transfer-params` (vLLM): prefill first, then the decode engine gets the KV's address. When
 *   no prefill replica is free or the prefill fails, the decode engine serves the request whole.
 * - `bootstrap` (SGLang): both engines get the request at once with a fresh bootstrap room; the
 *   decode engine waits in that room for the KV. An SGLang decode engine cannot serve a request
 *   whole, so without a free partner the request is `Unpaired`.
 */
export class PrefillPairing {
  /** Requests handed off, served whole by their decode replica, and whose prefill failed. */
  readonly counts = { handoffs: 0, whole: 0, failed: 0 };

  constructor(private readonly o: PrefillPairingOptions) {}

  async pair(r: PairingRequest, decode: Engine): Promise<Prefilled | Unpaired> {
    const protocol = decode.kvHandoff;
    const replicas = prefillReplicas(this.o.view, r.model, protocol ?? "kv-transfer-params");
    const free = replicas.map((e) => ({ e, busy: this.o.slots.busy(e) })).filter((c) => c.busy < this.o.replicaConcurrency);
    const partner = free.length === 0 ? undefined : free.reduce((a, b) => (b.busy < a.busy ? b : a)).e;
    const none = replicas.length === 0 ? `no prefill replica of ${r.model} here takes requests` : `every prefill replica of ${r.model} here is busy`;
    if (protocol === "bootstrap") return partner ? this.alongside(r, partner) : { refused: `${none}, and an SGLang decode replica serves nothing without one` };
    return partner ? this.first(r, partner) : this.whole(none);
  }

  /** vLLM's handoff: prefill on `e`, then the decode engine pulls the KV from where `e` says it waits. */
  private async first(r: PairingRequest, e: Engine): Promise<Prefilled> {
    const key = launchKey(e.launch);
    this.o.slots.hold(e);
    const metered = this.o.meter && !e.recordsRequests ? this.o.meter.begin(e.launch.gpus, r.inputTokens, false) : undefined;
    // A prefill replica that stops answering its health checks fails the prefill at once.
    const outcome = await prefillForRemoteDecode(`${e.url}${r.path}`, withServedName(r.body, r.model, servedNameOf(e.launch)), this.o.timeoutMs, e.stoppedAnswering);
    this.o.slots.release(e);
    if (!outcome.ok) {
      metered?.abandon();
      this.o.log?.(`gateway: prefill on ${key} failed, the decode replica serves the request whole: ${outcome.reason}`);
      return this.whole(`prefill on ${key} failed: ${outcome.reason}`);
    }
    this.counts.handoffs++;
    const energyJ = outcome.energyJ ?? (await metered?.finish(1))?.energyJ;
    return { said: key, fields: { kv_transfer_params: outcome.params }, energyJ: Promise.resolve(energyJ), cancel: () => {} };
  }

  /** SGLang's handoff: `e` prefills in a fresh bootstrap room while the decode engine waits there for the KV. */
  private alongside(r: PairingRequest, e: Engine): Prefilled {
    const key = launchKey(e.launch);
    const at: KvBootstrap = { bootstrap_host: e.kvBootstrap!.host, bootstrap_port: e.kvBootstrap!.port, bootstrap_room: randomInt(ROOMS) };
    const failed = new AbortController();
    const ended = new AbortController();
    this.o.slots.hold(e);
    const metered = this.o.meter && !e.recordsRequests ? this.o.meter.begin(e.launch.gpus, r.inputTokens, false) : undefined;
    const stop = e.stoppedAnswering ? AbortSignal.any([ended.signal, e.stoppedAnswering]) : ended.signal;
    const energyJ = prefillAlongside(`${e.url}${r.path}`, withServedName(r.body, r.model, servedNameOf(e.launch)), at, this.o.timeoutMs, stop).then(async (outcome) => {
      this.o.slots.release(e);
      if (!outcome.ok) {
        metered?.abandon();
        if (!ended.signal.aborted) {
          this.counts.failed++;
          this.o.log?.(`gateway: prefill on ${key} (room ${at.bootstrap_room}) failed, its decode partner is stopped: ${outcome.reason}`);
        }
        failed.abort(new Error(`prefill on ${key} failed: ${outcome.reason}`));
        return undefined;
      }
      this.counts.handoffs++;
      return outcome.energyJ ?? (await metered?.finish(1))?.energyJ;
    });
    return { said: key, fields: at, energyJ, failed: failed.signal, cancel: () => ended.abort() };
  }

  private whole(why: string): Prefilled {
    this.counts.whole++;
    return { said: `whole: ${why}`.slice(0, 500), energyJ: NOTHING, cancel: () => {} };
  }
}
