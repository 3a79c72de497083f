-- 016: the sliding logs of the rate limits as bigint arrays (docs/decisions.md#4-rate-limits).
--
-- `rate_limits` (003) kept each admission as numeric µs plus a random fraction that named the request,
-- and the deciding statement returned the whole log as text for the API process to find its requests
-- in (numeric arithmetic, sorting, and text conversion and parsing of every log on every decision).
-- Under the trigger benchmark this form takes about 12 µs of PostgreSQL CPU and 25 µs of the API
-- process's CPU less per request (docs/benchmarks.md). Here a bucket's log is the admission times
-- in µs (bigint; the requests admitted by one statement share its time), and the row also keeps when
-- the last statement decided and how many of its requests it admitted, which is all the API process
-- needs: its requests of a bucket are admitted in arrival order, so the first `admitted` of them were.
--
-- A new table rather than a changed one: during a rolling restart, processes still running the
-- previous version keep deciding on `rate_limits` and never see a log they cannot read; each version
-- enforces the limits on its own table until the old processes are gone. `rate_limits` is no longer
-- written by this version; a later migration may drop it.
CREATE TABLE rate_limit_logs (
  bucket     text     PRIMARY KEY,
  hits       bigint[] NOT NULL,
  decided_us bigint   NOT NULL,
  admitted   int      NOT NULL
);
