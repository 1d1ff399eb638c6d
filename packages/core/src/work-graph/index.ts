export * from "./claims.ts";
export * from "./fixture.ts";
export * from "./graph.ts";
export * from "./model.ts";
export * from "./overlap.ts";
export * from "./router.ts";
export * from "./statuses.ts";
export * from "./wake-recheck.ts";
