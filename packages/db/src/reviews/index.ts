export * from "./conflict-reviews.ts";
export * from "./packets.ts";
