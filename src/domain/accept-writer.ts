/**
 * What the domain needs to make an accepted send durable (docs/decisions.md#3-outcomes-of-the-four-operations "accepted"): a writer that
 * commits the batch row, its processing job and, when given, the request's idempotency answer together,
 * and resolves only after that commit.
 *
 * The domain knows only this interface. The service's implementation is the group-commit store
 * `AcceptStore` in db/accept-store.ts (its job INSERT handed in from the queue by service.ts), built once
 * in service.ts and handed to the routes through AppDeps.
 */

/** One batch row as `batches` takes it (JSON columns already serialised). */
export interface BatchRow {
  batch_id: string;
  company_id: number;
  kind: 'automation' | 'campaign';
  source_id: number;
  total: number;
  ignored_contacts: number;
  /** The items as JSON text (an array of BatchItem). */
  items: string;
  /** The overrides as JSON text. */
  overrides: string;
  /** The template snapshot as JSON text. */
  template: string;
}

/**
 * The answer a request records under its Idempotency-Key (domain/idempotency.ts), committed in the same
 * transaction as its batch: the key, the HTTP status and the exact body text.
 */
export interface AnswerRecord { key: string; status: number; body: string }

/** Durable accept of batches: one per service. */
export interface BatchAcceptor {
  /**
   * Resolves once the batch row, its `batch-process` job and (when given) the idempotency record of
   * the request's answer are committed together; rejects when they are not (nothing of it is stored).
   */
  write(row: BatchRow, opts?: { idempotency?: AnswerRecord }): Promise<void>;
}
