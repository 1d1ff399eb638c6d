export * from "./api-tokens.ts";
export * from "./members.ts";
export * from "./passwords.ts";
