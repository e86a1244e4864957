import { NvmlReturn } from "./nvml-return.ts";

/** NVML_DEVICE_NAME_V2_BUFFER_SIZE and NVML_DEVICE_UUID_V2_BUFFER_SIZE are both 96. */
const STRING_BUFFER = 96;
/** First guess for clock lists; NVML says how many it has when this is too small. */
const INITIAL_LIST_CAPACITY = 64;

/**
 * Calls an NVML getter that fills a caller-owned char buffer and returns the NUL-terminated text.
 *
 * @example
 * readNvmlString((buf, len) => nvml.nvmlDeviceGetName(handle, buf, len)); // { result: 0, text: "NVIDIA H100 80GB HBM3" }
 */
export function readNvmlString(call: (buffer: Buffer, length: number) => number): { result: number; text: string } {
  const buffer = Buffer.alloc(STRING_BUFFER);
  const result = call(buffer, buffer.length);
  const end = buffer.indexOf(0);
  return { result, text: buffer.toString("utf8", 0, end < 0 ? buffer.length : end) };
}

/**
 * NVML's list protocol: `count` carries the capacity in and the number of entries out; when the
 * capacity is too small the call returns NVML_ERROR_INSUFFICIENT_SIZE with the count it needs, and
 * we call again with that much room.
 */
export function readNvmlList(call: (count: [number], out: Uint32Array) => number): { result: number; values: number[] } {
  let capacity = INITIAL_LIST_CAPACITY;
  let result: number = NvmlReturn.INSUFFICIENT_SIZE;
  for (let attempt = 0; attempt < 3 && result === NvmlReturn.INSUFFICIENT_SIZE; attempt++) {
    const count: [number] = [capacity];
    const out = new Uint32Array(capacity);
    result = call(count, out);
    if (result === NvmlReturn.SUCCESS) return { result, values: Array.from(out.subarray(0, Math.min(count[0], capacity))) };
    if (count[0] <= capacity) break;
    capacity = count[0];
  }
  return { result, values: [] };
}
