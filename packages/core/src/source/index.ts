export * from "./import-source.ts";
export * from "./names.ts";
