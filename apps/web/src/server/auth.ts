import { authPerDb } from "@rhumbatron/api";
import { serverSettings } from "./settings.ts";

/**
 * better-auth for this server's database client (createAuth in @rhumbatron/api), configured from the
 * server's settings: what resolveCaller reads sessions with, and what serves `app/api/auth/[...all]`.
 */
export const authFor = authPerDb(serverSettings);
