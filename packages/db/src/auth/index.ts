export * from "./api-tokens.ts";
export * from "./members.ts";
export * from "./operator.ts";
export * from "./passwords.ts";
export * from "./sign-in-attempts.ts";
