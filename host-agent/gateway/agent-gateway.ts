import type { PlanApplier } from "../applier/plan-applier.ts";
import { splitHostPort, type AgentConfig } from "../config/agent-config.ts";
import { ingressSecrets } from "../config/ingress-secrets.ts";
import type { Hardware } from "../agent/hardware.ts";
import { EnergyMeter } from "../receipts/energy-meter.ts";
import type { RequestTracker } from "../telemetry/request-tracker.ts";
import { IngressAuth } from "./ingress-auth.ts";
import { serviceModel } from "./service-model.ts";
import type { SiteView } from "./replica-directory.ts";
import { SiteGateway } from "./site-gateway.ts";

/**
 * Starts the site gateway on `config.ingress` over the applier's engines and plan, with
 * predictions from the performance model in the site's time (simulated sites run faster), and an
 * energy meter on the GPUs' counters for the receipts of engines that give none (vLLM, SGLang).
 *
 * @example
 * const { gateway, url } = await startAgentGateway(config, { applier, hardware });
 */
export async function startAgentGateway(config: AgentConfig & { ingress: string }, parts: { applier: PlanApplier; hardware: Hardware; requests?: RequestTracker; log?: (m: string) => void }): Promise<{ gateway: SiteGateway; url: string }> {
  const { applier, hardware } = parts;
  const gateway = new SiteGateway({
    view: applierView(config.site, applier),
    ingress: new IngressAuth({ secrets: ingressSecrets(config) }),
    idleTimeoutMs: config.gatewayIdleTimeoutMs,
    requestBodyIdleTimeoutMs: config.requestBodyIdleTimeoutMs,
    maxHeldBytes: config.gatewayMaxHeldBytes,
    balanceReadMs: config.gatewayBalanceReadMs,
    scheduler: config.scheduler,
    replicaConcurrency: config.gatewayReplicaConcurrency,
    queueMax: config.gatewayQueueMax,
    queueWaitMs: config.gatewayQueueWaitMs,
    defaultOutputTokens: config.gatewayOutputTokens,
    predict: serviceModel({
      gpuTypes: hardware.gpuTypes,
      speed: hardware.sim?.clock.speed ?? 1,
      fallback: { ttftMs: config.gatewayTtftMs, tbtMs: config.gatewayTbtMs },
      clockOf: (id) => applier.current?.clockOf.get(id),
    }),
    requests: parts.requests,
    meter: new EnergyMeter({ energyJ: (gpu) => hardware.gpus.totalEnergyJ(gpu) }),
    log: parts.log,
  });
  const [host, port] = splitHostPort(config.ingress);
  return { gateway, url: await gateway.start(host, port) };
}


/** The site as the applier runs it: its engines, the slice they came from and each instance's state. */
export function applierView(site: string, applier: PlanApplier): SiteView {
  return { site, engines: () => applier.engines.values(), slice: () => applier.current?.slice ?? null, instanceState: (id) => applier.instanceState(id) };
}
