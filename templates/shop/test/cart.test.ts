import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { addItem, emptyCart, MAX_QUANTITY, removeItem, setQuantity } from "../src/cart.js";
import { getProduct } from "../src/catalog.js";
import { ShopError } from "../src/errors.js";

const mug = getProduct("mug"); // 1200 cents
const tee = getProduct("tee"); // 2500 cents

describe("cart", () => {
  it("starts empty with a zero total", () => {
    assert.deepEqual(emptyCart(), { items: [], totalCents: 0 });
  });

  it("adds items and totals them in integer cents", () => {
    const cart = addItem(addItem(emptyCart(), mug, 2), tee);
    assert.deepEqual(
      cart.items.map((item) => [item.productId, item.quantity]),
      [
        ["mug", 2],
        ["tee", 1],
      ],
    );
    assert.equal(cart.totalCents, 2 * 1200 + 2500);
  });

  it("merges repeated adds of the same product into one line", () => {
    const cart = addItem(addItem(emptyCart(), mug), mug, 3);
    assert.equal(cart.items.length, 1);
    assert.equal(cart.items[0]?.quantity, 4);
    assert.equal(cart.totalCents, 4 * 1200);
  });

  it("sets a quantity, and quantity 0 removes the item", () => {
    const cart = setQuantity(addItem(emptyCart(), mug), "mug", 5);
    assert.equal(cart.totalCents, 5 * 1200);
    assert.deepEqual(setQuantity(cart, "mug", 0), emptyCart());
  });

  it("removing the last item empties the cart", () => {
    const cart = removeItem(addItem(emptyCart(), tee, 2), "tee");
    assert.deepEqual(cart, emptyCart());
  });

  it("rejects quantities that are not positive integers up to the maximum", () => {
    const cart = addItem(emptyCart(), mug);
    for (const quantity of [-1, 0.5, Number.NaN, MAX_QUANTITY + 1]) {
      assert.throws(() => addItem(cart, tee, quantity), ShopError);
      assert.throws(() => setQuantity(cart, "mug", quantity), ShopError);
    }
    assert.throws(() => addItem(cart, tee, 0), ShopError);
    assert.throws(() => addItem(cart, mug, MAX_QUANTITY), ShopError, "merged quantity over the maximum");
  });

  it("rejects changes to items that are not in the cart", () => {
    assert.throws(() => removeItem(emptyCart(), "mug"), /not in the cart/);
    assert.throws(() => setQuantity(emptyCart(), "mug", 2), /not in the cart/);
  });

  it("never mutates the cart it was given", () => {
    const cart = addItem(emptyCart(), mug);
    const before = structuredClone(cart);
    addItem(cart, tee);
    setQuantity(cart, "mug", 3);
    removeItem(cart, "mug");
    assert.deepEqual(cart, before);
  });
});
