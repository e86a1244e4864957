/** Edge routing: the snapshot, smooth weighted round-robin with overflow, receipts. */
export * from "./swrr.ts";
export * from "./overflow.ts";
export * from "./carbon.ts";
export * from "./site-status.ts";
export * from "./routing-snapshot.ts";
export * from "./router.ts";
export * from "./energy-receipt.ts";
export * from "./plan-against-fleet.ts";
