// A wishlist as an immutable value: product ids in the order they were added, no duplicates.

import { addItem, type Cart } from "./cart.js";
import { findProduct, type Product } from "./catalog.js";
import { ShopError } from "./errors.js";

export interface Wishlist {
  readonly productIds: readonly string[];
}

export function emptyWishlist(): Wishlist {
  return { productIds: [] };
}

/** Adds a product. Adding a product that is already on the wishlist changes nothing. */
export function addToWishlist(wishlist: Wishlist, product: Product): Wishlist {
  if (wishlist.productIds.includes(product.id)) return wishlist;
  return { productIds: [...wishlist.productIds, product.id] };
}

export function removeFromWishlist(wishlist: Wishlist, productId: string): Wishlist {
  if (!wishlist.productIds.includes(productId)) {
    throw new ShopError(404, `product ${productId} is not on the wishlist`);
  }
  return { productIds: wishlist.productIds.filter((id) => id !== productId) };
}

/** The wishlisted products, in the order they were added. */
export function listWishlist(wishlist: Wishlist): Product[] {
  return wishlist.productIds.flatMap((id) => {
    const product = findProduct(id);
    return product === undefined ? [] : [product];
  });
}

/** Takes a product off the wishlist and adds one of it to the cart. */
export function moveToCart(wishlist: Wishlist, cart: Cart, product: Product): { wishlist: Wishlist; cart: Cart } {
  const nextWishlist = removeFromWishlist(wishlist, product.id);
  return { wishlist: nextWishlist, cart: addItem(cart, product, 1) };
}
