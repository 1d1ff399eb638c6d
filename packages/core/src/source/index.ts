export * from "./names.ts";
