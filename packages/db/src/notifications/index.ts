export * from "./inbox.ts";
export * from "./notifier.ts";
