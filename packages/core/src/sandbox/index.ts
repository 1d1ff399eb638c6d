export * from "./allowlist.ts";
export * from "./budget.ts";
export * from "./chromium.ts";
export * from "./meter.ts";
export type * from "./model.ts";
export * from "./names.ts";
export * from "./output-cut.ts";
