// Starts the real HTTP server on a free port and exercises it with fetch.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { close, createShopServer, listen } from "../src/server.js";

const server = createShopServer();
let base = "";

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("server", () => {
  before(async () => {
    base = `http://127.0.0.1:${await listen(server, 0)}`;
  });

  after(async () => {
    await close(server);
  });

  it("serves the page and its script", async () => {
    const page = await fetch(`${base}/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type") ?? "", /text\/html/);
    const html = await page.text();
    assert.match(html, /data-testid="cart-total"/);
    assert.match(html, /data-testid="wishlist"/);

    const script = await fetch(`${base}/app.js`);
    assert.equal(script.status, 200);
    assert.match(script.headers.get("content-type") ?? "", /javascript/);
    await script.text();
  });

  it("does not serve files outside public/", async () => {
    for (const path of ["/../package.json", "/%2e%2e/package.json", "/src/server.ts", "/nope.html"]) {
      const response = await fetch(`${base}${path}`);
      assert.equal(response.status, 404, path);
      await response.text();
    }
  });

  it("lists products", async () => {
    const { status, body } = await call("GET", "/api/products");
    assert.equal(status, 200);
    assert.equal((body.products as unknown[]).length, 4);
  });

  it("runs the wishlist flow: add to wishlist, move to cart", async () => {
    const user = { "x-user-id": "flow" };
    assert.equal((await call("POST", "/api/wishlist", { productId: "cap" }, user)).status, 201);
    assert.equal((await call("POST", "/api/wishlist", { productId: "cap" }, user)).status, 201);
    assert.deepEqual((await call("GET", "/api/wishlist", undefined, user)).body, {
      items: [{ id: "cap", name: "Baseball Cap", priceCents: 1899 }],
    });

    const moved = await call("POST", "/api/wishlist/cap/move-to-cart", undefined, user);
    assert.equal(moved.status, 200);
    assert.deepEqual(moved.body.wishlist, { items: [] });
    assert.deepEqual(moved.body.cart, {
      items: [{ productId: "cap", name: "Baseball Cap", unitPriceCents: 1899, quantity: 1, lineTotalCents: 1899 }],
      totalCents: 1899,
    });
  });

  it("changes quantities and empties the cart", async () => {
    const user = { "x-user-id": "qty" };
    await call("POST", "/api/cart/items", { productId: "stickers", quantity: 2 }, user);
    const patched = await call("PATCH", "/api/cart/items/stickers", { quantity: 5 }, user);
    assert.equal(patched.body.totalCents, 5 * 399);
    const removed = await call("DELETE", "/api/cart/items/stickers", undefined, user);
    assert.deepEqual(removed.body, { items: [], totalCents: 0 });
  });

  it("answers bad requests with JSON errors", async () => {
    assert.equal((await call("POST", "/api/cart/items", { productId: "nope" })).status, 404);
    assert.equal((await call("POST", "/api/cart/items", { productId: "mug", quantity: -1 })).status, 400);
    assert.equal((await call("POST", "/api/cart/items", { productId: "mug", quantity: "2" })).status, 400);
    assert.equal((await call("GET", "/api/unknown")).status, 404);
    assert.equal((await call("PUT", "/api/cart")).status, 405);

    const broken = await fetch(`${base}/api/cart/items`, { method: "POST", body: "{not json" });
    assert.equal(broken.status, 400);
    assert.match(((await broken.json()) as { error: string }).error, /not valid JSON/);
  });
});
