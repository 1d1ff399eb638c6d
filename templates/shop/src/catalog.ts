import { ShopError } from "./errors.js";

export interface Product {
  readonly id: string;
  readonly name: string;
  /** Price in integer cents. */
  readonly priceCents: number;
}

/** The fixed product catalog. */
export const products: readonly Product[] = [
  { id: "mug", name: "Rhumbatron Mug", priceCents: 1200 },
  { id: "tee", name: "Logo T-Shirt", priceCents: 2500 },
  { id: "cap", name: "Baseball Cap", priceCents: 1899 },
  { id: "stickers", name: "Sticker Pack", priceCents: 399 },
];

export function findProduct(id: string): Product | undefined {
  return products.find((product) => product.id === id);
}

/** Like findProduct, but an unknown id is a 404. */
export function getProduct(id: string): Product {
  const product = findProduct(id);
  if (product === undefined) throw new ShopError(404, `unknown product: ${id}`);
  return product;
}
