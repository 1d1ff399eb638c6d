export * from "./api-tokens.ts";
export * from "./members.ts";
export * from "./operator.ts";
export * from "./passwords.ts";
export { userIdentity } from "./people.ts";
export * from "./sign-in-attempts.ts";
