-- 002: what the send pipeline needs beyond 001.
--
-- messages.lease_until: a delivery run claims a message (status still 'pending') until this time; no
--   other run hands it to a provider while the lease holds. The holder renews it while it works, so a
--   lease only runs out when its holder died. Database time (now()), never the injected clock.
-- messages.held_until: a campaign message held outside the company's delivery hours (4.4) until the
--   window opens; cleared when it is released for delivery. `scheduled_for` keeps the opening for
--   operators; this column is the work marker the release sweep looks for.
ALTER TABLE messages ADD COLUMN lease_until timestamptz;
ALTER TABLE messages ADD COLUMN held_until timestamptz;
CREATE INDEX messages_held ON messages (held_until) WHERE held_until IS NOT NULL;
