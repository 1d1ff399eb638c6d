// Micro benchmark of the cart and wishlist handlers, through the same dispatch
// (routing + authorization) the server uses, without the network.
// Prints one JSON line: {"p95Ms": <number>, "samples": <n>}. Used by the
// performance check (`npm run bench`), which expects p95Ms below 200.

import { type ApiRequest, handleApi } from "./app.js";
import { createStore } from "./handlers.js";

const SAMPLES = 2000;
const WARMUP = 200;
const USERS = 50;

/** One sample: a short shopping session that ends with an empty cart and wishlist. */
function session(user: string): ApiRequest[] {
  const headers = { "x-user-id": user, "x-role": "customer" };
  return [
    { method: "POST", url: "/api/wishlist", headers, body: { productId: "mug" } },
    { method: "GET", url: "/api/wishlist", headers },
    { method: "POST", url: "/api/wishlist/mug/move-to-cart", headers },
    { method: "POST", url: "/api/cart/items", headers, body: { productId: "tee", quantity: 2 } },
    { method: "PATCH", url: "/api/cart/items/tee", headers, body: { quantity: 3 } },
    { method: "GET", url: "/api/cart", headers },
    { method: "DELETE", url: "/api/cart/items/mug", headers },
    { method: "DELETE", url: "/api/cart/items/tee", headers },
  ];
}

const store = createStore();
const durations: number[] = [];

for (let i = 0; i < WARMUP + SAMPLES; i++) {
  const requests = session(`bench-${i % USERS}`);
  const start = performance.now();
  for (const request of requests) {
    const result = handleApi(store, request);
    // A failing handler must fail the benchmark, not make it look fast.
    if (result.status >= 400) {
      throw new Error(`${request.method} ${request.url} answered ${result.status}: ${JSON.stringify(result.body)}`);
    }
  }
  const elapsed = performance.now() - start;
  if (i >= WARMUP) durations.push(elapsed);
}

durations.sort((a, b) => a - b);
const p95 = durations[Math.min(durations.length - 1, Math.ceil(durations.length * 0.95) - 1)] ?? 0;
console.log(JSON.stringify({ p95Ms: Number(p95.toFixed(4)), samples: durations.length }));
