#!/usr/bin/env node
// An engine that loses its port, as vLLM does when another process binds it first: it starts a
// stranger that listens on --port (a detached process, outside the engine's process group, that
// answers every request 200 after STRANGER_ANSWER_MS, default 600, and ends itself after 5 s),
// waits until the stranger listens, and LOST_PORT_EXIT_MS (default 300) later prints the bind error
// and exits with status 1. A health check sent meanwhile is answered by the stranger, after the
// engine has ended.
/* global setTimeout */
import { spawn } from "node:child_process";
import { createServer, connect } from "node:net";
import { fileURLToPath } from "node:url";
import { listenAddress } from "./engine-argv.js";

const argv = process.argv.slice(2);
const { port, host } = listenAddress(argv);

if (argv[0] === "--stranger") {
  const answerMs = Number(process.env.STRANGER_ANSWER_MS ?? 600);
  createServer((socket) => setTimeout(() => socket.end("HTTP/1.1 200 OK\r\ncontent-length: 1\r\nconnection: close\r\n\r\nx"), answerMs)).listen(port, host);
  setTimeout(() => process.exit(0), 5000);
} else {
  spawn(process.execPath, [fileURLToPath(import.meta.url), "--stranger", "--port", String(port), "--host", host], { detached: true, stdio: "ignore" }).unref();
  const exitOnceListened = () => {
    const probe = connect(port, host);
    probe.once("connect", () => {
      probe.destroy();
      setTimeout(() => {
        console.error(`ERROR: [Errno 98] error while attempting to bind on address ('${host}', ${port}): address already in use`);
        process.exit(1);
      }, Number(process.env.LOST_PORT_EXIT_MS ?? 300));
    });
    probe.once("error", () => setTimeout(exitOnceListened, 20));
  };
  exitOnceListened();
}
