// The API handlers. Each takes the store, whose data it acts on (ownerId), the
// path parameters and the parsed JSON body, and returns a status and a JSON body.
// Routing and authorization happen before a handler runs (see app.ts).

import { addItem, type Cart, emptyCart, lineTotalCents, removeItem, setQuantity } from "./cart.js";
import { getProduct, products } from "./catalog.js";
import { ShopError } from "./errors.js";
import {
  addToWishlist,
  emptyWishlist,
  listWishlist,
  moveToCart,
  removeFromWishlist,
  type Wishlist,
} from "./wishlist.js";

export interface ShopState {
  cart: Cart;
  wishlist: Wishlist;
}

/** In-memory state per user id. Lives as long as the process. */
export type Store = Map<string, ShopState>;

export function createStore(): Store {
  return new Map();
}

export interface HandlerInput {
  readonly store: Store;
  readonly ownerId: string;
  readonly params: Readonly<Record<string, string>>;
  readonly body: unknown;
}

export interface HandlerResult {
  readonly status: number;
  readonly body: unknown;
}

type Handler = (input: HandlerInput) => HandlerResult;

export const handlers = {
  listProducts: () => ({ status: 200, body: { products } }),

  getCart: ({ store, ownerId }) => ({ status: 200, body: cartView(stateOf(store, ownerId).cart) }),

  addCartItem: ({ store, ownerId, body }) => {
    const state = stateOf(store, ownerId);
    const product = getProduct(stringField(body, "productId"));
    state.cart = addItem(state.cart, product, integerField(body, "quantity", 1));
    return { status: 201, body: cartView(state.cart) };
  },

  setCartItemQuantity: ({ store, ownerId, params, body }) => {
    const state = stateOf(store, ownerId);
    state.cart = setQuantity(state.cart, param(params, "id"), integerField(body, "quantity"));
    return { status: 200, body: cartView(state.cart) };
  },

  removeCartItem: ({ store, ownerId, params }) => {
    const state = stateOf(store, ownerId);
    state.cart = removeItem(state.cart, param(params, "id"));
    return { status: 200, body: cartView(state.cart) };
  },

  getWishlist: ({ store, ownerId }) => ({
    status: 200,
    body: wishlistView(stateOf(store, ownerId).wishlist),
  }),

  addWishlistItem: ({ store, ownerId, body }) => {
    const state = stateOf(store, ownerId);
    state.wishlist = addToWishlist(state.wishlist, getProduct(stringField(body, "productId")));
    return { status: 201, body: wishlistView(state.wishlist) };
  },

  removeWishlistItem: ({ store, ownerId, params }) => {
    const state = stateOf(store, ownerId);
    state.wishlist = removeFromWishlist(state.wishlist, param(params, "id"));
    return { status: 200, body: wishlistView(state.wishlist) };
  },

  moveWishlistItemToCart: ({ store, ownerId, params }) => {
    const state = stateOf(store, ownerId);
    const moved = moveToCart(state.wishlist, state.cart, getProduct(param(params, "id")));
    state.wishlist = moved.wishlist;
    state.cart = moved.cart;
    return {
      status: 200,
      body: { cart: cartView(state.cart), wishlist: wishlistView(state.wishlist) },
    };
  },
} satisfies Record<string, Handler>;

export type HandlerName = keyof typeof handlers;

function stateOf(store: Store, ownerId: string): ShopState {
  let state = store.get(ownerId);
  if (state === undefined) {
    state = { cart: emptyCart(), wishlist: emptyWishlist() };
    store.set(ownerId, state);
  }
  return state;
}

function cartView(cart: Cart) {
  return {
    items: cart.items.map((item) => ({ ...item, lineTotalCents: lineTotalCents(item) })),
    totalCents: cart.totalCents,
  };
}

function wishlistView(wishlist: Wishlist) {
  return { items: listWishlist(wishlist) };
}

function param(params: Readonly<Record<string, string>>, name: string): string {
  const value = params[name];
  if (value === undefined) throw new ShopError(400, `missing path parameter: ${name}`);
  return value;
}

function field(body: unknown, name: string): unknown {
  if (typeof body !== "object" || body === null) return undefined;
  return (body as Record<string, unknown>)[name];
}

function stringField(body: unknown, name: string): string {
  const value = field(body, name);
  if (typeof value !== "string" || value === "") {
    throw new ShopError(400, `body field "${name}" must be a non-empty string`);
  }
  return value;
}

function integerField(body: unknown, name: string, fallback?: number): number {
  const value = field(body, name) ?? fallback;
  if (typeof value !== "number") throw new ShopError(400, `body field "${name}" must be a number`);
  return value;
}
