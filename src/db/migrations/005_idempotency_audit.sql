-- 005: idempotency keys of 4.3 / 4.4 and the operator audit log.

-- One row per (company, Idempotency-Key). `request_hash` is the SHA-256 of the operation and the raw
-- body; `locked_until` is the lease of a request still in flight (a crashed one frees its key when the
-- lease ends); `response_*` is the first answer, replayed for 24 hours.
CREATE TABLE idempotency_keys (
  company_id      integer     NOT NULL REFERENCES companies ON DELETE CASCADE,
  idempotency_key text        NOT NULL,
  request_hash    bytea       NOT NULL,
  locked_until    timestamptz,
  response_status integer,
  response_body   text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (company_id, idempotency_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE audit_log (
  entry_id   bigserial   PRIMARY KEY,
  at         timestamptz NOT NULL DEFAULT now(),
  actor      text        NOT NULL,
  action     text        NOT NULL,
  target     text        NOT NULL,
  company_id integer,
  details    jsonb       NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_company ON audit_log (company_id, entry_id DESC);
