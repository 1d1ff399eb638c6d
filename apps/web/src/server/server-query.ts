import { createCaller, createContext } from "@rhumbatron/api";
import { headers } from "next/headers";
import superjson from "superjson";
import { getDb } from "./db.ts";
import { defaultServices } from "./services.ts";

type Api = ReturnType<typeof createCaller>;

/**
 * A tRPC query run during the server render, as the request's own caller: the same procedure, role
 * check and errors as over HTTP, so the first paint shows the data instead of "Loading…". The answer
 * is serialised with the transport's own superjson for the client's query cache. A refusal or a
 * failure gives null: the client then asks over HTTP as before and shows that answer and its error.
 */
export async function serverQuery<T>(run: (api: Api) => Promise<T>): Promise<string | null> {
  try {
    const ctx = createContext({ db: getDb(), services: defaultServices(), headers: await headers() });
    return superjson.stringify(await run(createCaller(ctx)));
  } catch {
    return null;
  }
}
