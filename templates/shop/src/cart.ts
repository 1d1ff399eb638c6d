// A shopping cart as an immutable value. Every operation returns a new Cart.
//
// Invariants (checked by test/cart.invariant.test.ts):
//   - every quantity is an integer from 1 to MAX_QUANTITY;
//   - each product appears at most once;
//   - totalCents equals the sum of unitPriceCents * quantity over all items;
//   - removing the last item leaves an empty cart with totalCents 0.

import type { Product } from "./catalog.js";
import { ShopError } from "./errors.js";

export const MAX_QUANTITY = 99;

export interface CartItem {
  readonly productId: string;
  readonly name: string;
  readonly unitPriceCents: number;
  readonly quantity: number;
}

export interface Cart {
  readonly items: readonly CartItem[];
  readonly totalCents: number;
}

export function emptyCart(): Cart {
  return { items: [], totalCents: 0 };
}

export function lineTotalCents(item: CartItem): number {
  return item.unitPriceCents * item.quantity;
}

/** Adds `quantity` of a product, merging with an existing line for the same product. */
export function addItem(cart: Cart, product: Product, quantity = 1): Cart {
  assertQuantity(quantity);
  const existing = cart.items.find((item) => item.productId === product.id);
  if (existing === undefined) {
    const item: CartItem = {
      productId: product.id,
      name: product.name,
      unitPriceCents: product.priceCents,
      quantity,
    };
    return withItems([...cart.items, item]);
  }
  return setQuantity(cart, product.id, existing.quantity + quantity);
}

/** Sets the quantity of an item already in the cart. Quantity 0 removes the item. */
export function setQuantity(cart: Cart, productId: string, quantity: number): Cart {
  if (quantity === 0) return removeItem(cart, productId);
  assertQuantity(quantity);
  requireItem(cart, productId);
  return withItems(cart.items.map((item) => (item.productId === productId ? { ...item, quantity } : item)));
}

export function removeItem(cart: Cart, productId: string): Cart {
  requireItem(cart, productId);
  return withItems(cart.items.filter((item) => item.productId !== productId));
}

/** Lists every broken invariant; an empty list means the cart is consistent. */
export function cartInvariantViolations(cart: Cart): string[] {
  const violations: string[] = [];
  const seen = new Set<string>();
  let sum = 0;
  for (const item of cart.items) {
    if (!isValidQuantity(item.quantity)) {
      violations.push(`${item.productId}: quantity ${item.quantity} is not an integer from 1 to ${MAX_QUANTITY}`);
    }
    if (!Number.isInteger(item.unitPriceCents) || item.unitPriceCents < 0) {
      violations.push(`${item.productId}: unit price ${item.unitPriceCents} is not a non-negative integer`);
    }
    if (seen.has(item.productId)) violations.push(`${item.productId}: appears more than once`);
    seen.add(item.productId);
    sum += lineTotalCents(item);
  }
  if (cart.totalCents !== sum) {
    violations.push(`totalCents ${cart.totalCents} does not equal the sum of lines ${sum}`);
  }
  return violations;
}

function withItems(items: readonly CartItem[]): Cart {
  const totalCents = items.reduce((sum, item) => sum + lineTotalCents(item), 0);
  return { items, totalCents };
}

function isValidQuantity(quantity: number): boolean {
  return Number.isInteger(quantity) && quantity >= 1 && quantity <= MAX_QUANTITY;
}

function assertQuantity(quantity: number): void {
  if (!isValidQuantity(quantity)) {
    throw new ShopError(400, `quantity must be an integer from 1 to ${MAX_QUANTITY}, got ${quantity}`);
  }
}

function requireItem(cart: Cart, productId: string): void {
  if (!cart.items.some((item) => item.productId === productId)) {
    throw new ShopError(404, `product ${productId} is not in the cart`);
  }
}
