import { closeSync, fstatSync, openSync, readSync } from "node:fs";

/** The last `max` lines of an engine's output, for error messages. */
export class OutputTail {
  private readonly kept: string[] = [];
  private partial = "";

  constructor(private readonly max: number) {}

  push(chunk: Buffer | string): void {
    const parts = (this.partial + chunk.toString()).split("\n");
    this.partial = parts.pop() ?? "";
    for (const line of parts) this.keep(line);
    if (this.partial.length > 4096) {
      this.keep(this.partial);
      this.partial = "";
    }
  }

  lines(): string[] {
    return this.partial ? [...this.kept, this.partial] : [...this.kept];
  }

  private keep(line: string): void {
    this.kept.push(line.length > 500 ? `${line.slice(0, 500)}...` : line);
    if (this.kept.length > this.max) this.kept.shift();
  }
}

/** The last `count` lines of a log file, read from its last 16 KiB; none when it cannot be read. */
export function readLastLines(path: string, count: number): string[] {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return [];
  }
  try {
    const size = fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.min(size, 16_384));
    readSync(fd, buffer, 0, buffer.length, size - buffer.length);
    const tail = new OutputTail(count);
    tail.push(buffer);
    return tail.lines().filter((line) => line !== "");
  } finally {
    closeSync(fd);
  }
}
