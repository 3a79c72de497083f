/**
 * Errors of the operator API. Every admin 422 is `{"detail": [{type, loc, msg, input?}]}`:
 * throw this (or components.ts `invalidInput(loc, msg)`) from a handler; the admin plugin
 * also formats schema errors, malformed JSON and a domain `DomainError(422)` this way.
 */

/** A refused request: answered 422 with FastAPI-style items (`loc` starts with body / path / query). */
export class AdminValidationError extends Error {
  readonly items: unknown[];
  readonly statusCode = 422;
  constructor(items: unknown[]) {
    super('validation failed');
    this.items = items;
  }
}
