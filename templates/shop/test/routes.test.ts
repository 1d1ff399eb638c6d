import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { handlers } from "../src/handlers.js";
import { matchRoute, routes, routeTable } from "../src/routes.js";

describe("routes", () => {
  it("lists the API contract", () => {
    assert.deepEqual(routeTable(), [
      "DELETE /api/cart/items/:id",
      "DELETE /api/wishlist/:id",
      "GET /api/cart",
      "GET /api/products",
      "GET /api/wishlist",
      "PATCH /api/cart/items/:id",
      "POST /api/cart/items",
      "POST /api/wishlist",
      "POST /api/wishlist/:id/move-to-cart",
    ]);
  });

  it("has no duplicate method + path", () => {
    assert.equal(new Set(routeTable()).size, routes.length);
  });

  it("routes every handler, and every route names a handler", () => {
    const routed = new Set(routes.map((route) => route.handler));
    assert.deepEqual([...routed].sort(), Object.keys(handlers).sort());
  });

  it("matches paths and extracts decoded parameters", () => {
    const match = matchRoute("POST", "/api/wishlist/a%20b/move-to-cart");
    assert.equal(match.kind, "matched");
    if (match.kind === "matched") {
      assert.equal(match.route.handler, "moveWishlistItemToCart");
      assert.deepEqual(match.params, { id: "a b" });
    }
  });

  it("tells a missing path from a wrong method", () => {
    assert.equal(matchRoute("GET", "/api/nope").kind, "not_found");
    assert.equal(matchRoute("GET", "/api/cart/items/").kind, "not_found");
    assert.equal(matchRoute("PUT", "/api/cart").kind, "method_not_allowed");
  });
});
