/** The last `max` lines of a child's output, for error messages. */
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
