/** Errors of the operator API. */

/** A request that fails the route's JSON Schema: answered 422 with FastAPI-style items. */
export class AdminValidationError extends Error {
  readonly items: unknown[];
  readonly statusCode = 422;
  constructor(items: unknown[]) {
    super('validation failed');
    this.items = items;
  }
}
