export * from "./deliveries.ts";
export * from "./fan-out.ts";
export * from "./hooks.ts";
