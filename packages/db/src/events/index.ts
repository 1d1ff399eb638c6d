export * from "./analytics.ts";
export * from "./archiver.ts";
export * from "./claims.ts";
export * from "./domain-write.ts";
export * from "./maintenance.ts";
export * from "./owners.ts";
export * from "./projector.ts";
