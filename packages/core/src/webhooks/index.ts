export * from "./address.ts";
export * from "./model.ts";
export * from "./signature.ts";
