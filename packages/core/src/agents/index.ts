export * from "./choice.ts";
export * from "./provider.ts";
export * from "./transcript.ts";
