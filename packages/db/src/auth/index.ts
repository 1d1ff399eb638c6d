export * from "./api-tokens.ts";
export * from "./passwords.ts";
