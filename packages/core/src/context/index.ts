export * from "./conflict-review.ts";
export * from "./packet.ts";
