export * from "./dead-letters.ts";
export * from "./workflows.ts";
