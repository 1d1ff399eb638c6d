export * from "./config.ts";
export * from "./errors.ts";
export * from "./events/index.ts";
export * from "./settings.ts";
