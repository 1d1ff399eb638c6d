export * from "./compatibility.ts";
export * from "./composition.ts";
export * from "./gate.ts";
export * from "./landing.ts";
export * from "./plan.ts";
export * from "./promotion.ts";
export * from "./release-target.ts";
export * from "./rerun.ts";
