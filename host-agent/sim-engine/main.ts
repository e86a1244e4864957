import { parseArgs } from "node:util";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import { RealtimeEngine } from "./realtime-engine.ts";
import { SimEngineServer } from "./sim-engine-server.ts";
import { SimulatedSite } from "./simulated-site.ts";

/**
 * A simulated engine as its own process, e.g. as the `--engine-command` of a vLLM-style agent or
 * for a quick local endpoint:
 *
 *   node --import tsx host-agent/sim-engine/main.ts --model llama2-70b --tp 2 --port 8100 [--gpu-type H100-80GB] [--speed 1] [--mhz 1200]
 *
 * It simulates its own `tp` GPUs. Prints one JSON line `{ "url": ... }` once listening; SIGTERM or
 * SIGINT stops it.
 */
async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      model: { type: "string", default: "llama3.1-8b" },
      "served-model-name": { type: "string" },
      tp: { type: "string", default: "1" },
      host: { type: "string", default: "127.0.0.1" },
      port: { type: "string", default: "8000" },
      "gpu-type": { type: "string", default: "H100-80GB" },
      speed: { type: "string", default: "1" },
      mhz: { type: "string" },
      "max-tokens": { type: "string", default: "256" },
    },
    allowPositionals: true,
    strict: true,
  });
  const tp = Number(values.tp);
  const llm = llmSpec(values.model);
  const site = await SimulatedSite.open({ gpuType: values["gpu-type"], gpuCount: tp, speed: Number(values.speed) });
  const gpus = Array.from({ length: tp }, (_, i) => i);
  if (values.mhz !== undefined) for (const i of gpus) await site.gpus.lockGraphicsClocks(i, Number(values.mhz), Number(values.mhz));
  const engine = new RealtimeEngine({ llm, tp, site, gpus });
  const server = new SimEngineServer({ engine, llm, servedModel: values["served-model-name"] ?? values.model, defaultMaxTokens: Number(values["max-tokens"]), nowMs: () => site.clock.nowMs() });
  const url = await server.start(values.host, Number(values.port));
  console.log(JSON.stringify({ url, model: llm.id, tp, gpuType: site.spec.type, speed: site.clock.speed }));
  const stop = async () => {
    server.accepting = false;
    await engine.close();
    await server.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop());
  process.once("SIGINT", () => void stop());
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`sim-engine: ${(error as Error).message}`);
  process.exit(1);
});
