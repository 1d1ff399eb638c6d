export { AUTH_BASE_PATH, type Auth, authPerDb, createAuth } from "./auth.ts";
export { type Caller, membershipIn, type ResolveOptions, resolveCaller } from "./caller.ts";
export { codeStoreCanonicalReader, localCanonicalReader } from "./canonical-reader.ts";
export { DOMAIN_TO_TRPC, toTRPCError } from "./errors.ts";
export { handleTrpcRequest, TRPC_ENDPOINT } from "./http.ts";
export { hasAtLeast, lowerRole, ROLE_ORDER, roleRank } from "./roles.ts";
export { type AppRouter, appRouter, createCaller } from "./routers/_app.ts";
export { type Context, createContext, type Services } from "./trpc.ts";
