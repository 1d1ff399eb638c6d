// Protected invariant: the Cart. Property-style: many seeded random operation
// sequences, checking the invariants after every step and comparing the cart
// with a simple model (product id -> quantity).

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  addItem,
  type Cart,
  cartInvariantViolations,
  emptyCart,
  MAX_QUANTITY,
  removeItem,
  setQuantity,
} from "../src/cart.js";
import { products } from "../src/catalog.js";
import { ShopError } from "../src/errors.js";
import { addToWishlist, emptyWishlist, moveToCart, type Wishlist } from "../src/wishlist.js";

const SEEDS = 100;
const STEPS = 200;

/** mulberry32: a small seeded PRNG, so failures reproduce. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(next: () => number, values: readonly T[]): T {
  const value = values[Math.floor(next() * values.length)];
  if (value === undefined) throw new Error("pick from an empty list");
  return value;
}

/** Quantities an attacker or a bug might send, valid and invalid. */
const QUANTITIES = [-3, -1, 0, 0.5, 1, 1, 2, 3, 7, MAX_QUANTITY, MAX_QUANTITY + 1, Number.NaN];

function assertConsistent(cart: Cart, model: Map<string, number>, context: string): void {
  assert.deepEqual(cartInvariantViolations(cart), [], context);
  for (const item of cart.items) {
    assert.ok(Number.isInteger(item.quantity) && item.quantity > 0, `${context}: positive integer quantity`);
  }
  assert.deepEqual(
    Object.fromEntries(cart.items.map((item) => [item.productId, item.quantity])),
    Object.fromEntries(model),
    `${context}: cart matches the model`,
  );
  const expectedTotal = cart.items.reduce((sum, item) => sum + item.unitPriceCents * item.quantity, 0);
  assert.equal(cart.totalCents, expectedTotal, `${context}: total is the sum of price * quantity`);
  if (cart.items.length === 0) assert.equal(cart.totalCents, 0, `${context}: an empty cart totals 0`);
}

/** Applies an operation; invalid operations must throw a ShopError and change nothing. */
function attempt(cart: Cart, operation: () => Cart, context: string): Cart | undefined {
  const before = structuredClone(cart);
  try {
    return operation();
  } catch (error) {
    assert.ok(error instanceof ShopError, `${context}: expected a ShopError, got ${String(error)}`);
    assert.deepEqual(cart, before, `${context}: a rejected operation leaves the cart unchanged`);
    return undefined;
  }
}

describe("cart invariant", () => {
  it("holds over seeded random add / set quantity / remove / move-to-cart sequences", () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const next = random(seed);
      let cart = emptyCart();
      let wishlist: Wishlist = emptyWishlist();
      const model = new Map<string, number>();

      for (let step = 0; step < STEPS; step++) {
        const product = pick(next, products);
        const quantity = pick(next, QUANTITIES);
        const context = `seed ${seed} step ${step}`;
        const op = pick(next, ["add", "add", "set", "remove", "wish", "move"] as const);
        const current = model.get(product.id) ?? 0;

        if (op === "add") {
          const result = attempt(cart, () => addItem(cart, product, quantity), `${context} add`);
          const valid = Number.isInteger(quantity) && quantity >= 1 && current + quantity <= MAX_QUANTITY;
          assert.equal(result !== undefined, valid, `${context}: add ${quantity} accepted only when valid`);
          if (result) {
            cart = result;
            model.set(product.id, current + quantity);
          }
        } else if (op === "set") {
          const result = attempt(cart, () => setQuantity(cart, product.id, quantity), `${context} set`);
          const valid = current > 0 && Number.isInteger(quantity) && quantity >= 0 && quantity <= MAX_QUANTITY;
          assert.equal(result !== undefined, valid, `${context}: set ${quantity} accepted only when valid`);
          if (result) {
            cart = result;
            if (quantity === 0) model.delete(product.id);
            else model.set(product.id, quantity);
          }
        } else if (op === "remove") {
          const result = attempt(cart, () => removeItem(cart, product.id), `${context} remove`);
          assert.equal(result !== undefined, current > 0, `${context}: remove accepted only for items in the cart`);
          if (result) {
            const wasLast = cart.items.length === 1;
            cart = result;
            model.delete(product.id);
            if (wasLast) assert.deepEqual(cart, emptyCart(), `${context}: removing the last item empties the cart`);
          }
        } else if (op === "wish") {
          wishlist = addToWishlist(wishlist, product);
        } else {
          const onWishlist = wishlist.productIds.includes(product.id);
          const before = cart;
          try {
            const moved = moveToCart(wishlist, cart, product);
            assert.ok(onWishlist && current < MAX_QUANTITY, `${context}: move accepted only when valid`);
            wishlist = moved.wishlist;
            cart = moved.cart;
            model.set(product.id, current + 1);
          } catch (error) {
            assert.ok(error instanceof ShopError, `${context}: move throws a ShopError`);
            assert.ok(!onWishlist || current >= MAX_QUANTITY, `${context}: move rejected only when invalid`);
            assert.equal(cart, before);
          }
        }

        assertConsistent(cart, model, context);
      }
    }
  });

  it("removing every item one by one always ends in an empty cart", () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const next = random(seed);
      let cart = emptyCart();
      for (const product of products) {
        if (next() < 0.7) cart = addItem(cart, product, 1 + Math.floor(next() * 5));
      }
      while (cart.items.length > 0) {
        const item = pick(next, cart.items);
        cart = removeItem(cart, item.productId);
        assert.deepEqual(cartInvariantViolations(cart), [], `seed ${seed}`);
      }
      assert.deepEqual(cart, emptyCart(), `seed ${seed}`);
    }
  });
});
