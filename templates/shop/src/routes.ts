// The route table: the API contract. `npm run contract` prints it, and the
// contract check diffs it against the contract changes a Change declares.

import type { Action } from "./authorization.js";
import type { HandlerName } from "./handlers.js";

export type Method = "GET" | "POST" | "PATCH" | "DELETE";

export interface Route {
  readonly method: Method;
  /** Path pattern; `:name` segments become path parameters. */
  readonly path: string;
  readonly handler: HandlerName;
  /** Every action the caller must be allowed to perform. */
  readonly actions: readonly Action[];
}

export const routes: readonly Route[] = [
  { method: "GET", path: "/api/products", handler: "listProducts", actions: ["products:read"] },
  { method: "GET", path: "/api/cart", handler: "getCart", actions: ["cart:read"] },
  { method: "POST", path: "/api/cart/items", handler: "addCartItem", actions: ["cart:write"] },
  { method: "PATCH", path: "/api/cart/items/:id", handler: "setCartItemQuantity", actions: ["cart:write"] },
  { method: "DELETE", path: "/api/cart/items/:id", handler: "removeCartItem", actions: ["cart:write"] },
  { method: "GET", path: "/api/wishlist", handler: "getWishlist", actions: ["wishlist:read"] },
  { method: "POST", path: "/api/wishlist", handler: "addWishlistItem", actions: ["wishlist:write"] },
  { method: "DELETE", path: "/api/wishlist/:id", handler: "removeWishlistItem", actions: ["wishlist:write"] },
  {
    method: "POST",
    path: "/api/wishlist/:id/move-to-cart",
    handler: "moveWishlistItemToCart",
    actions: ["wishlist:write", "cart:write"],
  },
];

/** The contract as sorted "METHOD /path" strings. */
export function routeTable(): string[] {
  return routes.map((route) => `${route.method} ${route.path}`).sort();
}

export type RouteMatch =
  | { readonly kind: "matched"; readonly route: Route; readonly params: Record<string, string> }
  | { readonly kind: "not_found" }
  | { readonly kind: "method_not_allowed" };

export function matchRoute(method: string, pathname: string): RouteMatch {
  let pathMatched = false;
  for (const route of routes) {
    const params = matchPath(route.path, pathname);
    if (params === undefined) continue;
    if (route.method === method) return { kind: "matched", route, params };
    pathMatched = true;
  }
  return pathMatched ? { kind: "method_not_allowed" } : { kind: "not_found" };
}

function matchPath(pattern: string, pathname: string): Record<string, string> | undefined {
  const want = pattern.split("/");
  const got = pathname.split("/");
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, segment] of want.entries()) {
    const actual = got[index] ?? "";
    if (segment.startsWith(":")) {
      if (actual === "") return undefined;
      const value = safeDecode(actual);
      if (value === undefined) return undefined;
      params[segment.slice(1)] = value;
    } else if (segment !== actual) {
      return undefined;
    }
  }
  return params;
}

function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
