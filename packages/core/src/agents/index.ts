export * from "./choice.ts";
export * from "./provider.ts";
