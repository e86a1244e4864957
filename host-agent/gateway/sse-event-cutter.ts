/** The longest incomplete event held back; a longer one is passed on as it comes. */
export const MAX_HELD_EVENT_BYTES = 1 << 20;

/**
 * Passes an SSE stream on in whole events: `take` returns the bytes up to the last event boundary
 * seen and holds back the incomplete event after it, so that when the stream breaks off the
 * client has received only complete events and an error event can follow cleanly. Events longer
 * than MAX_HELD_EVENT_BYTES are passed on unheld (then `atBoundary` is false until one ends).
 *
 * @example
 * const cutter = new SseEventCutter();
 * res.write(cutter.take(chunk)); // complete events only
 */
export class SseEventCutter {
  private held: Buffer = Buffer.alloc(0);
  /** Whether everything passed on so far ends at an event boundary. */
  atBoundary = true;

  take(chunk: Buffer): Buffer {
    const data = this.held.length > 0 ? Buffer.concat([this.held, chunk]) : chunk;
    const end = Math.max(data.lastIndexOf("\n\n") + 2, data.lastIndexOf("\r\n\r\n") + 4, 0);
    if (end === 0 && data.length > MAX_HELD_EVENT_BYTES) {
      this.held = Buffer.alloc(0);
      this.atBoundary = false;
      return data;
    }
    if (end > 0) this.atBoundary = true;
    this.held = data.subarray(end);
    return data.subarray(0, end);
  }

  /** What is held when the stream ends cleanly. */
  rest(): Buffer {
    const rest = this.held;
    this.held = Buffer.alloc(0);
    return rest;
  }
}
