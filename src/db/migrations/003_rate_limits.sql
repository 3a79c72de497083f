-- 003: sliding-log rate limits shared by every API process on one PostgreSQL (docs/decisions.md#4-rate-limits).
-- One row per (company, operation) bucket holding the times (µs since the epoch, with a random
-- fraction that makes each request's entry unique) of the requests accepted in the current window.
CREATE TABLE rate_limits (
  bucket text      PRIMARY KEY,
  hits   numeric[] NOT NULL
);
