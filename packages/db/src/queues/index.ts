export * from "./consumer.ts";
export * from "./dead-letters.ts";
export * from "./enqueue.ts";
export * from "./workflow-runs.ts";
export * from "./workflows.ts";
