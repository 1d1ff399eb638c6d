export * from "./fixtures.ts";
export { authFor, testServices, testSettings } from "./services.ts";
