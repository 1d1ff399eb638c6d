export * from "./catalogue.ts";
export * from "./command.ts";
export * from "./envelope.ts";
export * from "./event-id.ts";
export * from "./hash.ts";
export * from "./outbox.ts";
export * from "./streams.ts";
