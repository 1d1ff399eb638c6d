export * from "./model.ts";
export * from "./redact.ts";
