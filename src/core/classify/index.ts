/** Edge classification: input tokens estimated from the text, output bin from hints and an online predictor. */
export * from "./token-estimate.ts";
export * from "./output-predictor.ts";
export * from "./classify-request.ts";
