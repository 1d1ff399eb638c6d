import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { addItem, emptyCart } from "../src/cart.js";
import { getProduct } from "../src/catalog.js";
import { addToWishlist, emptyWishlist, listWishlist, moveToCart, removeFromWishlist } from "../src/wishlist.js";

const mug = getProduct("mug");
const cap = getProduct("cap");

describe("wishlist", () => {
  it("lists added products in the order they were added", () => {
    const wishlist = addToWishlist(addToWishlist(emptyWishlist(), cap), mug);
    assert.deepEqual(
      listWishlist(wishlist).map((product) => product.id),
      ["cap", "mug"],
    );
  });

  it("never holds duplicates", () => {
    const once = addToWishlist(emptyWishlist(), mug);
    const twice = addToWishlist(once, mug);
    assert.deepEqual(twice.productIds, ["mug"]);
  });

  it("removes products, and rejects removing one that is not there", () => {
    const wishlist = removeFromWishlist(addToWishlist(emptyWishlist(), mug), "mug");
    assert.deepEqual(listWishlist(wishlist), []);
    assert.throws(() => removeFromWishlist(wishlist, "mug"), /not on the wishlist/);
  });

  it("moves a product to the cart: off the wishlist, one more in the cart", () => {
    const wishlist = addToWishlist(addToWishlist(emptyWishlist(), mug), cap);
    const cart = addItem(emptyCart(), mug, 2);
    const moved = moveToCart(wishlist, cart, mug);
    assert.deepEqual(moved.wishlist.productIds, ["cap"]);
    assert.deepEqual(
      moved.cart.items.map((item) => [item.productId, item.quantity]),
      [["mug", 3]],
    );
    assert.equal(moved.cart.totalCents, 3 * mug.priceCents);
  });

  it("refuses to move a product that is not on the wishlist", () => {
    assert.throws(() => moveToCart(emptyWishlist(), emptyCart(), mug), /not on the wishlist/);
  });
});
