-- 001: companies, credentials, contacts, segments, automations, campaigns, batches, messages.
-- Forward-only. Ids exposed in the API are int4 (segment_id, automation_id, campaign_id, company_id);
-- contacts and messages can grow past 2^31 and use int8 internally.

CREATE TABLE companies (
  company_id          serial PRIMARY KEY,
  name                text        NOT NULL,
  subscription_active boolean     NOT NULL DEFAULT false,
  default_country     text        NOT NULL DEFAULT 'DE',
  delivery_hours      jsonb,
  connector_connected boolean     NOT NULL DEFAULT false,
  connector_provider  text,
  channel             jsonb       NOT NULL DEFAULT '{"provider":"outbox"}',
  segment_count       integer     NOT NULL DEFAULT 0,
  created_at          timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  key_id       serial PRIMARY KEY,
  company_id   integer     NOT NULL REFERENCES companies ON DELETE CASCADE,
  key_hash     bytea       NOT NULL UNIQUE,
  prefix       text        NOT NULL,
  label        text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at   timestamptz
);
CREATE INDEX api_keys_company ON api_keys (company_id);

CREATE TABLE contacts (
  contact_id  bigserial PRIMARY KEY,
  company_id  integer     NOT NULL REFERENCES companies ON DELETE CASCADE,
  phone       text        NOT NULL,          -- E.164, with the leading +
  sha256_plus bytea       NOT NULL,          -- sha256 of the E.164 form with the +
  sha256_bare bytea       NOT NULL,          -- sha256 of the E.164 form without the +
  first_name  text,
  last_name   text,
  variables   jsonb       NOT NULL DEFAULT '{}',
  opted_out   boolean     NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (company_id, phone)
);
CREATE INDEX contacts_sha256_plus ON contacts (company_id, sha256_plus);
CREATE INDEX contacts_sha256_bare ON contacts (company_id, sha256_bare);

CREATE TABLE segments (
  segment_id serial PRIMARY KEY,
  company_id integer     NOT NULL REFERENCES companies ON DELETE CASCADE,
  name       text        NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX segments_company ON segments (company_id);

CREATE TABLE segment_members (
  segment_id integer NOT NULL REFERENCES segments ON DELETE CASCADE,
  contact_id bigint  NOT NULL REFERENCES contacts ON DELETE CASCADE,
  added_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (segment_id, contact_id)
);

CREATE TABLE automations (
  automation_id serial PRIMARY KEY,
  company_id    integer     NOT NULL REFERENCES companies ON DELETE CASCADE,
  name          text        NOT NULL,
  type          text        NOT NULL,
  active        boolean     NOT NULL,
  template      jsonb       NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX automations_company ON automations (company_id);

CREATE TABLE campaigns (
  campaign_id serial PRIMARY KEY,
  company_id  integer     NOT NULL REFERENCES companies ON DELETE CASCADE,
  name        text        NOT NULL,
  template    jsonb       NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX campaigns_company ON campaigns (company_id);

-- A send batch accepted by 4.3 or 4.4. `items` holds the distinct contacts to process (normalised at
-- accept time), `overrides` the request-level media and URL-button overrides, `template` a snapshot of
-- the automation's or campaign's template at accept time.
CREATE TABLE batches (
  batch_id         uuid        PRIMARY KEY,
  company_id       integer     NOT NULL REFERENCES companies ON DELETE CASCADE,
  kind             text        NOT NULL CHECK (kind IN ('automation', 'campaign')),
  source_id        integer     NOT NULL,
  status           text        NOT NULL DEFAULT 'accepted' CHECK (status IN ('accepted', 'processing', 'completed')),
  total            integer     NOT NULL,
  ignored_contacts integer     NOT NULL DEFAULT 0,
  items            jsonb       NOT NULL,
  overrides        jsonb       NOT NULL DEFAULT '{}',
  template         jsonb       NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  completed_at     timestamptz
);
CREATE INDEX batches_company ON batches (company_id, created_at DESC);

-- One message per distinct contact of a batch; `seq` is its position in the batch's items.
CREATE TABLE messages (
  message_id    uuid        PRIMARY KEY,
  batch_id      uuid        NOT NULL REFERENCES batches ON DELETE CASCADE,
  company_id    integer     NOT NULL,
  seq           integer     NOT NULL,
  contact_id    bigint,
  phone         text        NOT NULL,
  status        text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed', 'skipped')),
  reason        text,
  error         text,
  attempts      integer     NOT NULL DEFAULT 0,
  scheduled_for timestamptz,
  sent_at       timestamptz,
  rendered      jsonb,
  updated_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (batch_id, seq)
);
CREATE INDEX messages_pending ON messages (batch_id) WHERE status = 'pending';
