/** HTTP status codes the shop answers with when a request cannot be served. */
export type ErrorStatus = 400 | 403 | 404 | 405 | 413;

/** An expected failure: bad input, a missing item, a forbidden action. Maps to an HTTP status. */
export class ShopError extends Error {
  readonly status: ErrorStatus;

  constructor(status: ErrorStatus, message: string) {
    super(message);
    this.name = "ShopError";
    this.status = status;
  }
}
