// Request dispatch without any I/O: match the route, identify the caller,
// authorize, run the handler. server.ts feeds it HTTP requests; the tests and
// the benchmark call it directly.

import { type Actor, can, isRole } from "./authorization.js";
import { ShopError } from "./errors.js";
import { type HandlerResult, handlers, type Store } from "./handlers.js";
import { matchRoute } from "./routes.js";

export interface ApiRequest {
  readonly method: string;
  /** Path with optional query, e.g. "/api/cart?userId=alice". */
  readonly url: string;
  readonly headers?: Readonly<Record<string, string | string[] | undefined>>;
  readonly body?: unknown;
}

/** Used when a request names no user: the page runs as this customer. */
export const DEFAULT_ACTOR: Actor = { id: "demo", role: "customer" };

export function handleApi(store: Store, request: ApiRequest): HandlerResult {
  try {
    const url = new URL(request.url, "http://shop.invalid");
    const match = matchRoute(request.method, url.pathname);
    if (match.kind === "not_found") throw new ShopError(404, `no route for ${url.pathname}`);
    if (match.kind === "method_not_allowed") {
      throw new ShopError(405, `${request.method} is not allowed on ${url.pathname}`);
    }

    const actor = identify(request.headers ?? {});
    // Whose cart or wishlist: the caller's own unless ?userId= names someone else.
    const ownerId = url.searchParams.get("userId") ?? actor.id;
    for (const action of match.route.actions) {
      if (!can(actor.role, action, { actorId: actor.id, ownerId })) {
        throw new ShopError(403, `${actor.role} ${actor.id} may not ${action} for user ${ownerId}`);
      }
    }

    const handler = handlers[match.route.handler];
    return handler({ store, ownerId, params: match.params, body: request.body });
  } catch (error) {
    if (error instanceof ShopError) return { status: error.status, body: { error: error.message } };
    throw error;
  }
}

/**
 * Demo identity from the x-user-id and x-role headers. A real app would derive
 * the actor from a session; the demo trusts the headers.
 */
function identify(headers: Readonly<Record<string, string | string[] | undefined>>): Actor {
  const id = header(headers, "x-user-id") ?? DEFAULT_ACTOR.id;
  const role = header(headers, "x-role") ?? DEFAULT_ACTOR.role;
  if (!isRole(role)) throw new ShopError(400, `unknown role: ${role}`);
  return { id, role };
}

function header(headers: Readonly<Record<string, string | string[] | undefined>>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
