/**
 * A batch's funnel (docs/decisions.md#7-a-messages-life), the one TypeScript definition: every view of a batch
 * (GET /admin/batches/{id}, the batch list, the console's Sends list) turns the per-status numbers of
 * `cms_batch_status_counts()` into its counts here. The SQL twin, for the batch.completed event that the
 * outbox trigger writes inside the database, is `cms_batch_counts()` (migration 024);
 * test/pipeline/batch-counts.test.ts checks that both give the same counts for the same rows.
 */
import type { BatchCounts } from './batches.ts';

/** The messages of a batch by status: each message once, under its own status (pending not needed). */
export interface StatusCounts {
  sent: number; delivered: number; read: number; failed: number; skipped: number;
}

/**
 * The funnel of a batch of `total` messages from its per-status numbers: a read message counts as sent,
 * delivered and read; a delivered one as sent and delivered; failed and skipped as they are; pending =
 * total - sent - failed - skipped (messages not yet written included), so the counts add up to the total.
 */
export function batchCounts(total: number, s: StatusCounts): BatchCounts {
  const sent = s.sent + s.delivered + s.read;
  return {
    total, sent, delivered: s.delivered + s.read, read: s.read, failed: s.failed, skipped: s.skipped,
    pending: total - sent - s.failed - s.skipped,
  };
}
