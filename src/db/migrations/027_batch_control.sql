-- 027: big sends stay in hand (docs/decisions.md "Cancel, pause and resume"; docs/architecture.md
-- "Fan-out in steps").
--
-- `fanned_out`: how many of the batch's items have their message row written. The fan-out
-- (src/queue/handlers/batch-process.ts) writes a batch in bounded steps, each its own short
-- transaction that also advances this counter, so a crash resumes after the last committed step and a
-- batch is complete only once every item has its message (fanned_out = total) and none is pending.
-- `paused_at`: set while an operator holds the batch back (its messages stay pending, nothing is handed
-- to a provider); `cancelled_at`: set by a cancel, for good (every message not yet handed over ends
-- skipped / cancelled). Delivery claims read both under a share lock of the batch row, so once a pause
-- or cancel has committed no new message of the batch is claimed.
ALTER TABLE batches ADD COLUMN fanned_out integer NOT NULL DEFAULT 0;
ALTER TABLE batches ADD COLUMN paused_at timestamptz;
ALTER TABLE batches ADD COLUMN cancelled_at timestamptz;

-- Batches fanned out before this migration were fanned out whole, in one transaction.
UPDATE batches SET fanned_out = total WHERE status <> 'accepted';
-- A cancel before fan-out used to be a flag in `overrides`.
UPDATE batches SET cancelled_at = now() WHERE status <> 'completed' AND overrides ->> 'cancelled' = 'true';
