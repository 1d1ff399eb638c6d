export * from "./causal/index.ts";
export * from "./commands/queues.ts";
export * from "./config.ts";
export * from "./errors.ts";
export * from "./events/index.ts";
export * from "./ports/blob-store.ts";
export * from "./settings.ts";
export * from "./work-graph/index.ts";
