/**
 * Errors that domain functions raise for outcomes the API reports to the caller (docs/decisions.md#3-outcomes-of-the-four-operations):
 * the HTTP layer turns a DomainError into `status` with body `{"detail": detail}`.
 */
export class DomainError extends Error {
  readonly status: number;
  readonly detail: string;
  constructor(status: number, detail: string) {
    super(detail);
    this.status = status;
    this.detail = detail;
  }
}

/** 404 with the given detail, e.g. `notFound('Segment not found')`. */
export const notFound = (detail: string) => new DomainError(404, detail);

/** Largest id an int4 column holds; a larger id from a request can only be "not found". */
export const MAX_ID = 2_147_483_647;

/** True when `id` can name a row (a positive int4); other values are answered as not found. */
export function isRowId(id: number | bigint): id is number {
  return typeof id === 'number' && Number.isInteger(id) && id >= 1 && id <= MAX_ID;
}
