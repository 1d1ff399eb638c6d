export * from "./classifier.ts";
