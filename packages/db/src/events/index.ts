export * from "./analytics.ts";
export * from "./archiver.ts";
export * from "./consumer.ts";
export * from "./maintenance.ts";
export * from "./outbox.ts";
export * from "./projector.ts";
export * from "./publisher.ts";
export * from "./stream.ts";
