export * from "./causal-router.ts";
export * from "./complete-task.ts";
export * from "./create-change.ts";
export * from "./dispatch.ts";
export * from "./queries.ts";
export * from "./runs.ts";
export * from "./shared.ts";
export * from "./wake.ts";
