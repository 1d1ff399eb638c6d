// Every test name here contains "authorization": the security check runs
// `npm run test:authorization`, which selects tests by that word.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { handleApi } from "../src/app.js";
import { type Action, can, roles } from "../src/authorization.js";
import { createStore } from "../src/handlers.js";
import { routes } from "../src/routes.js";

const ownActions: Action[] = ["cart:read", "cart:write", "wishlist:read", "wishlist:write"];

describe("authorization rules", () => {
  it("authorization: every role may read products", () => {
    for (const role of roles) assert.ok(can(role, "products:read"), role);
  });

  it("authorization: viewers may not read or change carts or wishlists", () => {
    for (const action of ownActions) {
      assert.equal(can("viewer", action), false, action);
      assert.equal(can("viewer", action, { actorId: "v", ownerId: "v" }), false, action);
    }
  });

  it("authorization: customers may read and change only their own cart and wishlist", () => {
    for (const action of ownActions) {
      assert.ok(can("customer", action, { actorId: "alice", ownerId: "alice" }), action);
      assert.equal(can("customer", action, { actorId: "alice", ownerId: "bob" }), false, action);
    }
  });

  it("authorization: admins may act on any user's cart and wishlist", () => {
    for (const action of ownActions) {
      assert.ok(can("admin", action, { actorId: "root", ownerId: "bob" }), action);
    }
  });

  it("authorization: every route requires at least one action", () => {
    for (const route of routes) assert.ok(route.actions.length > 0, `${route.method} ${route.path}`);
  });
});

describe("authorization through the API", () => {
  const alice = { "x-user-id": "alice", "x-role": "customer" };

  it("authorization: a customer cannot read or change another customer's cart", () => {
    const store = createStore();
    handleApi(store, {
      method: "POST",
      url: "/api/cart/items",
      headers: { "x-user-id": "bob" },
      body: { productId: "mug" },
    });

    assert.equal(handleApi(store, { method: "GET", url: "/api/cart?userId=bob", headers: alice }).status, 403);
    const write = handleApi(store, {
      method: "POST",
      url: "/api/cart/items?userId=bob",
      headers: alice,
      body: { productId: "tee" },
    });
    assert.equal(write.status, 403);
    assert.equal(
      handleApi(store, { method: "DELETE", url: "/api/cart/items/mug?userId=bob", headers: alice }).status,
      403,
    );

    const bobCart = handleApi(store, { method: "GET", url: "/api/cart", headers: { "x-user-id": "bob" } });
    assert.deepEqual(bobCart.body, {
      items: [{ productId: "mug", name: "Rhumbatron Mug", unitPriceCents: 1200, quantity: 1, lineTotalCents: 1200 }],
      totalCents: 1200,
    });
  });

  it("authorization: a customer cannot move items on another customer's wishlist", () => {
    const store = createStore();
    handleApi(store, {
      method: "POST",
      url: "/api/wishlist",
      headers: { "x-user-id": "bob" },
      body: { productId: "cap" },
    });
    const move = handleApi(store, { method: "POST", url: "/api/wishlist/cap/move-to-cart?userId=bob", headers: alice });
    assert.equal(move.status, 403);
  });

  it("authorization: a viewer can browse products but not use a cart", () => {
    const store = createStore();
    const viewer = { "x-user-id": "v", "x-role": "viewer" };
    assert.equal(handleApi(store, { method: "GET", url: "/api/products", headers: viewer }).status, 200);
    assert.equal(handleApi(store, { method: "GET", url: "/api/cart", headers: viewer }).status, 403);
    assert.equal(
      handleApi(store, { method: "POST", url: "/api/wishlist", headers: viewer, body: { productId: "mug" } }).status,
      403,
    );
  });

  it("authorization: an admin can read another user's cart", () => {
    const store = createStore();
    const admin = { "x-user-id": "root", "x-role": "admin" };
    assert.equal(handleApi(store, { method: "GET", url: "/api/cart?userId=bob", headers: admin }).status, 200);
  });

  it("authorization: an unknown role is rejected", () => {
    const result = handleApi(createStore(), { method: "GET", url: "/api/cart", headers: { "x-role": "superuser" } });
    assert.equal(result.status, 400);
  });
});
